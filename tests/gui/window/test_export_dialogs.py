"""Exports that tell the truth (issue 18 item 2), through File menu and its dialogs: the chosen
format's extension is added to a name typed without one, every dialog opens where the last file
of its kind went (after a restart too), and the evaluation bars come out whole when exported
while their tab is not showing."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QMargins, Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from memsense_gui.state import paths
from memsense_gui.views.dock import DockId
from memsense_gui.window.layouts import Layout
from memsense_gui.views.file_dialogs import extension_of, with_extension
from tests.gui.window.test_truth import menu_action, search


class SaveDialog:
    """QFileDialog.getSaveFileName answered with `answer`; the folder each call opened in is kept."""

    def __init__(self, monkeypatch):
        self.answer: tuple[str, str] = ("", "")
        self.opened_in: list[str] = []
        monkeypatch.setattr(QFileDialog, "getSaveFileName", self)

    def __call__(self, parent, title, start, filters):
        self.opened_in.append(start)
        return self.answer


@pytest.mark.parametrize("typed, chosen, filters, expected", [
    ("out", "JSON (*.json)", "TOML (*.toml);;JSON (*.json)", "out.json"),
    ("out", "", "TOML (*.toml);;JSON (*.json)", "out.toml"),
    ("out.toml", "JSON (*.json)", "TOML (*.toml);;JSON (*.json)", "out.toml"),
    ("plot", "SVG vector (*.svg)", "PNG image (*.png);;SVG vector (*.svg)", "plot.svg"),
    ("notes", "All files (*)", "All files (*)", "notes"),
])
def test_the_chosen_format_names_a_bare_file(typed, chosen, filters, expected):
    assert with_extension(typed, chosen, filters) == expected
    assert extension_of("TREC qrels (*.qrels *.txt)") == ".qrels"


def test_an_existing_folder_or_device_is_never_turned_into_a_file_beside_it(tmp_path):
    """Found by a walkthrough: a folder chosen became `folder.json` written beside it, `out/` a
    hidden `out/.json`, and `/dev/null` a new `/dev/null.toml`; now they stay as named, and the
    writer refuses them."""
    (tmp_path / "outdir").mkdir()
    for named in (str(tmp_path / "outdir"), str(tmp_path / "outdir") + "/", "/dev/null"):
        assert with_extension(named, "JSON (*.json)", "JSON (*.json)") == named


@pytest.mark.parametrize("answer", [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes])
def test_a_file_the_added_extension_names_is_replaced_only_when_the_user_says_so(qtbot, make_window, tmp_path,
                                                                                 monkeypatch, answer):
    """The dialog asked about the name typed ("keep"), not the file written ("keep.json")."""
    w = make_window()
    search(qtbot, w)
    target = tmp_path / "keep.json"
    target.write_text("kept\n")
    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda parent, title, text, *a: (asked.append(text), answer)[1])
    dialog = SaveDialog(monkeypatch)
    dialog.answer = (str(tmp_path / "keep"), "JSON (*.json)")
    menu_action(w, "Export results…").trigger()
    assert asked == [f"{target} already exists. Replace it?"]
    replaced = answer == QMessageBox.StandardButton.Yes
    assert (target.read_text() != "kept\n") == replaced and sorted(p.name for p in tmp_path.iterdir()) == [
        "home", "keep.json"]
    dialog.answer = (str(tmp_path / "fresh"), "JSON (*.json)")
    menu_action(w, "Export results…").trigger()
    assert len(asked) == 1 and json.loads((tmp_path / "fresh.json").read_text())["results"]


def test_exports_get_their_extension_and_dialogs_remember_their_folder(qtbot, make_window, app_home, tmp_path,
                                                                      monkeypatch):
    w = make_window()
    search(qtbot, w)
    dialog = SaveDialog(monkeypatch)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    dialog.answer = (str(first / "ranking"), "JSON (*.json)")
    menu_action(w, "Export results…").trigger()
    saved = json.loads((first / "ranking.json").read_text())
    assert saved["results"] == json.loads(json.dumps(list(w.ctx.session.ranking.results), default=list))
    dialog.answer = (str(second / "contributions"), "SVG vector (*.svg)")
    menu_action(w, "Contribution bars…").trigger()
    assert (second / "contributions.svg").read_text().startswith("<?xml")
    assert dialog.opened_in[1].startswith(str(first))  # the last export went there
    dialog.answer = (str(second / "settings"), "JSON (*.json)")
    menu_action(w, "Export settings…").trigger()
    assert json.loads((second / "settings.json").read_text())
    assert not dialog.opened_in[2].startswith(str(second))  # settings remember their own folder
    w.close()

    # a restart: the next export dialog opens where the last export went
    from memsense_gui.window.main_window import MainWindow

    again = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: None)
    qtbot.addWidget(again)
    dialog.answer = ("", "")
    menu_action(again, "Contribution bars…").trigger()
    assert dialog.opened_in[-1].startswith(str(second))
    opened: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda _p, _t, start, _f: (opened.append(start), ("", ""))[1])
    menu_action(again, "Import settings…").trigger()
    assert opened == [str(second)]


def test_evaluation_bars_are_whole_when_exported_from_a_hidden_short_tab(qtbot, evaluation_window, tmp_path,
                                                                        monkeypatch):
    w, view = evaluation_window()
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.run_button.click()
    dialog = SaveDialog(monkeypatch)
    w.resize(1280, 720)
    w.raise_dock(DockId.EVALUATION)  # seen once in its own layout (Evaluate)
    w.layouts.switch(Layout.INSPECT)
    w.tabifyDockWidget(w.dock(DockId.ROUTE_RANKS), w.dock(DockId.EVALUATION))  # then tabbed below the results
    w.raise_dock(DockId.ROUTE_RANKS)  # the Evaluation tab is behind another: not on screen
    w.resizeDocks([w.dock(DockId.ROUTE_RANKS)], [160], Qt.Orientation.Vertical)  # a short bottom area
    qtbot.wait(50)
    assert not w.showing(DockId.EVALUATION)
    dialog.answer = (str(tmp_path / "hidden"), "PNG image (*.png)")
    menu_action(w, "Evaluation bars…").trigger()
    hidden = w.exports.last_plot
    assert hidden is not None and hidden.path == tmp_path / "hidden.png"
    w.raise_dock(DockId.EVALUATION)
    qtbot.waitUntil(lambda: w.showing(DockId.EVALUATION), timeout=5000)
    dialog.answer = (str(tmp_path / "shown"), "PNG image (*.png)")
    menu_action(w, "Evaluation bars…").trigger()
    shown = w.exports.last_plot
    assert shown is not None and shown.path == tmp_path / "shown.png"
    assert hidden.size == shown.size == view.bars.export_size().grownBy(QMargins(0, int(hidden.band), 0, 0))
    assert hidden.data_area == shown.data_area
    # the data area reaches the foot of the file: nothing of the bars is cut off
    assert hidden.data_area.bottom() > hidden.size.height() - 60
