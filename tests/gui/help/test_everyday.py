"""Everyday comfort: File > Recent stores and Recent question files (remembered, the missing
pruned with a status line), `memsense-gui STORE` (and --help; a bad path is one line and the
last store opens), the chosen question set back on restart."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMenu

from core.errors import MemsenseError
from memsense_gui import app as app_module
from memsense_gui.state import paths
from tests.gui.fixtures import FakeEngine
from tests.gui.window.test_cases import _questions_file


def _menu(w, name: str) -> QMenu:
    menu = w.findChild(QMenu, name)
    assert menu is not None, name
    menu.aboutToShow.emit()  # what opening it does
    return menu


def _open(qtbot, w, location: str) -> None:
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=10_000):
        w.stores.open_store(location)


def test_recent_stores_reopen_and_missing_ones_are_pruned(qtbot, make_window, app_home):
    w = make_window(open_store=False)
    stores = [app_home / "stores" / name for name in ("one", "two", "three")]
    for store in stores:
        store.mkdir(parents=True)
        _open(qtbot, w, str(store))
    menu = _menu(w, "menu-recent-stores")
    assert [a.data() for a in menu.actions()] == [str(s) for s in reversed(stores)]
    stores[1].rmdir()
    menu = _menu(w, "menu-recent-stores")
    assert [a.data() for a in menu.actions()] == [str(stores[2]), str(stores[0])]
    assert "Removed 1 missing store" in w.statusBar().currentMessage() and "two" in w.statusBar().currentMessage()
    with qtbot.waitSignal(w.ctx.store_opened, timeout=10_000) as opened:
        menu.actions()[1].trigger()  # the oldest: reopened, and first in the list now
    assert opened.args == [str(stores[0])]
    assert _menu(w, "menu-recent-stores").actions()[0].data() == str(stores[0])


def test_recent_question_files_and_the_question_set_come_back_on_restart(qtbot, make_window, app_home, tmp_path):
    w = make_window()
    first, second = _questions_file(tmp_path), tmp_path / "more.json"
    second.write_text(first.read_text())
    w.ctx.question_sets.set_path(first)
    w.ctx.question_sets.set_path(second)
    menu = _menu(w, "menu-recent-questions")
    assert [a.data() for a in menu.actions()] == [str(second), str(first)]
    menu.actions()[1].trigger()
    assert w.ctx.question_sets.path == first and len(w.picker.questions) == 10
    w.close()
    from memsense_gui.window.main_window import MainWindow

    again = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: FakeEngine(loc))
    qtbot.addWidget(again)
    assert again.ctx.question_sets.path == first
    assert "more.json" in [a.data().rsplit("/", 1)[-1] for a in _menu(again, "menu-recent-questions").actions()]


def test_a_store_named_on_the_command_line_opens_and_a_bad_one_falls_back(qtbot, make_window, app_home):
    w = make_window(open_store=False)
    good = app_home / "stores" / "good"
    good.mkdir(parents=True)
    _open(qtbot, w, str(good))
    damaged = str(app_home / "stores" / "damaged")

    def factory(location: str) -> FakeEngine:
        if location == damaged:
            raise MemsenseError(f"the store {location} is damaged")
        return FakeEngine(location)

    w.ctx.engine_factory = factory
    with qtbot.waitSignal(w.ctx.store_opened, timeout=10_000) as opened:
        w.stores.start(damaged)  # `memsense-gui DAMAGED`: an error, then the last store opens
    assert opened.args == [str(good)] and w.ctx.location == str(good)
    with qtbot.waitSignal(w.ctx.store_opened, timeout=10_000) as opened:
        w.stores.start(str(app_home / "stores" / "other"))
    assert opened.args == [str(app_home / "stores" / "other")]


def test_the_command_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        app_module.main(["memsense-gui", "--help"])
    assert exit_.value.code == 0 and "STORE" in capsys.readouterr().out
    assert app_module.checked_store("") == ("", "")
    assert app_module.checked_store("http://localhost:6333") == ("http://localhost:6333", "")
    assert app_module.checked_store(str(tmp_path)) == (str(tmp_path.resolve()), "")
    store, problem = app_module.checked_store(str(tmp_path / "nowhere"))
    assert store == "" and problem.startswith("memsense-gui: error: no store at") and "\n" not in problem
    (tmp_path / "file.json").write_text("{}")
    store, problem = app_module.checked_store(str(tmp_path / "file.json"))
    assert store == "" and "is a file, not a store folder" in problem
