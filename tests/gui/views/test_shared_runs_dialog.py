"""Settings > Shared runs… (issue 38): the Connect dialog's rules for the runs database's password."""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLineEdit

from memsense_gui.state.shared_runs import ADDRESS_KEY, SharedRuns
from memsense_gui.views.shared_runs_dialog import SharedRunsDialog


def test_a_password_in_the_address_moves_to_the_masked_field_and_is_never_saved(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    shared = SharedRuns(settings)
    dialog = SharedRunsDialog(shared)
    qtbot.addWidget(dialog)
    assert dialog.password.echoMode() == QLineEdit.EchoMode.Password
    dialog.address.setText("postgresql://tuner:p%40ss@db.example:5432/team")
    dialog.name.setText("  Ana  ")
    dialog._accept()
    assert dialog.result() == dialog.DialogCode.Accepted
    assert dialog.address.text() == "postgresql://tuner@db.example:5432/team" and dialog.password.text() == "p@ss"
    settings.sync()
    assert "p@ss" not in (tmp_path / "s.ini").read_text() and "p%40ss" not in (tmp_path / "s.ini").read_text()
    assert settings.value(ADDRESS_KEY) == "postgresql://tuner@db.example:5432/team"
    assert (shared.made_by(), shared.url()) == ("Ana", "postgresql://tuner:p%40ss@db.example:5432/team")
    assert SharedRuns(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)).url() == \
        "postgresql://tuner@db.example:5432/team"  # after a restart: asked again (or PGPASSWORD)


def test_an_address_that_is_no_postgresql_is_one_line_and_nothing_is_saved(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    dialog = SharedRunsDialog(SharedRuns(settings))
    qtbot.addWidget(dialog)
    dialog.address.setText("mysql://u:secret@h/db?token=abc")
    dialog._accept()
    assert "is not a PostgreSQL address" in dialog.problem.text()
    assert "secret" not in dialog.problem.text() and "abc" not in dialog.problem.text()
    assert settings.value(ADDRESS_KEY) is None and dialog.result() != dialog.DialogCode.Accepted
