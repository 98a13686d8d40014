"""Dialogs: building a store, errors that say what to do."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from core.errors import MemsenseError
from memsense_gui.views.dialogs import NewStoreDialog, error_message, show_error


def test_new_store_dialog_suggests_a_folder_and_returns_the_choice(qtbot, tmp_path, monkeypatch):
    data = tmp_path / "my-conversations.jsonl"
    data.write_text("{}\n")
    dialog = NewStoreDialog(tmp_path / "stores")
    qtbot.addWidget(dialog)
    dialog.dataset.setText(str(data))
    assert dialog.location.text() == str(tmp_path / "stores" / "my-conversations")
    dialog.mode.setCurrentIndex(dialog.mode.findData("turn"))
    assert dialog.values() == (data, tmp_path / "stores" / "my-conversations", "turn")
    dialog._accept()
    assert dialog.result() == NewStoreDialog.DialogCode.Accepted


def test_new_store_dialog_refuses_a_missing_file(qtbot, tmp_path, monkeypatch):
    warned = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: warned.append(a[2]))
    dialog = NewStoreDialog(tmp_path)
    qtbot.addWidget(dialog)
    dialog.dataset.setText(str(tmp_path / "nope.json"))
    dialog._accept()
    assert warned and "not a file" in warned[0]
    assert dialog.result() != NewStoreDialog.DialogCode.Accepted


def test_error_messages(qtbot):
    title, text, details = error_message(MemsenseError("the store is locked; close the other app"), "Opening")
    assert text == "Opening: the store is locked; close the other app" and not details
    exc = RuntimeError("boom")
    exc.traceback_text = "Traceback ..."
    title, text, details = error_message(exc)
    assert "unexpected RuntimeError" in text and "Nothing stored was changed" in text and details
    box = show_error(None, MemsenseError("x"))
    qtbot.addWidget(box)
    assert box.isVisible() and box.icon() == QMessageBox.Icon.Warning


def test_the_connect_dialog_never_shows_a_password_in_clear(qtbot):
    """Found by a walkthrough: the Database field showed postgresql://ms:PASSWORD@… as typed."""
    from PySide6.QtWidgets import QLineEdit

    from memsense_gui.views.connect import ConnectDialog, MemsenseConnection

    dialog = ConnectDialog(MemsenseConnection("postgresql://ms:Hunter2@Secret@127.0.0.1:5432/memsense",
                                              embedder="http://127.0.0.1:9/embed"))
    qtbot.addWidget(dialog)
    assert dialog.database.text() == "postgresql://ms@127.0.0.1:5432/memsense"
    assert dialog.password.echoMode() == QLineEdit.EchoMode.Password and dialog.password.text() == "Hunter2@Secret"
    assert dialog.values().database == "postgresql://ms:Hunter2%40Secret@127.0.0.1:5432/memsense"
    dialog.database.setText("postgresql://ro:s3cret@db:5432/memsense")  # pasted whole
    dialog.database.editingFinished.emit()
    assert "s3cret" not in dialog.database.text() and dialog.password.text() == "s3cret"
    assert all("s3cret" not in w.text() for w in dialog.findChildren(QLineEdit) if w is not dialog.password)


def test_the_watch_dialog_moves_a_typed_password_to_the_masked_field(qtbot):
    from PySide6.QtWidgets import QLineEdit

    from memsense_gui.views.study_watch import WatchDialog

    dialog = WatchDialog()
    qtbot.addWidget(dialog)
    dialog.address.setText("postgresql://tuner:s3cret@db:5432/studies")  # pasted whole
    dialog.address.editingFinished.emit()
    assert dialog.address.text() == "postgresql://tuner@db:5432/studies" and dialog.password.text() == "s3cret"
    assert dialog.password.echoMode() == QLineEdit.EchoMode.Password
    dialog.study.setText("night")
    assert dialog.chosen() == ("postgresql://tuner:s3cret@db:5432/studies", "night")
