"""Help as a user meets it: F1 on a table column opens the glossary at that column's term, every
header tooltip says so, Help > Glossary lists every term, Help > About names the versions, the
model and the open store's format."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from core.rank.glossary import GLOSSARY, SECTIONS, find
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.table import GLOSSARY_HINT
from memsense_gui.views.glossary import KEY


def _action(w, name: str) -> QAction:
    action = w.findChild(QAction, name)
    assert action is not None, name
    return action


def test_every_candidate_term_and_every_shown_column_has_a_glossary_entry():
    keys = [t.key for _, terms in SECTIONS for t in terms]
    assert len(keys) == len(set(keys))
    for label in ("Own RRF", "RRF + turn", "Final", "MMR", "recall_all@4", "ndcg@10", "Pushes out", "Pass", "lambda"):
        assert find(label) is not None, label
    assert find("Question") is None
    assert all(find(t.label) is not None for t in GLOSSARY)


def test_f1_on_a_focused_results_column_opens_the_glossary_at_its_term(qtbot, ranked_window):
    w = ranked_window
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w, timeout=2000)
    view = w.results.view
    tip = view.model().headerData(ResultsModel.FINAL, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert tip.endswith(GLOSSARY_HINT) and "round(RRF + turn + alpha" in tip
    view.setFocus()
    view.setCurrentIndex(view.model().index(0, ResultsModel.FINAL))
    qtbot.keyClick(view, Qt.Key.Key_F1)
    dialog = w.help.glossary
    assert dialog is not None and dialog.isVisible()
    assert dialog.selected_term() == "final_score"
    row = dialog.view.selectionModel().selectedRows()[0].row()
    assert dialog.proxy.index(row, 3).data() == "§3"


def test_help_glossary_lists_every_term_and_filters(qtbot, make_window):
    w = make_window()
    _action(w, "action-glossary").trigger()
    dialog = w.help.glossary
    assert dialog.row_count() == sum(len(terms) for _, terms in SECTIONS)
    qtbot.keyClicks(dialog.filter, "turn support")
    assert 0 < dialog.row_count() < 10
    keys = {dialog.proxy.index(r, KEY).data() for r in range(dialog.row_count())}
    assert "turn_support" in keys and "mmr_score" not in keys


def test_about_names_versions_model_and_store_format(qtbot, make_window):
    import numpy

    w = make_window()
    _action(w, "action-about-memsense").trigger()
    dialog = w.help.about
    qtbot.waitUntil(lambda: dialog.rows["Store format"].text() != "reading…", timeout=5000)
    text = dialog.text()
    assert f"numpy: {numpy.__version__}" in text and "PySide6: " in text and "Qt: " in text
    assert "onnxruntime: " in text and "pyqtgraph: " in text and "Python: " in text
    assert f"Store: {w.ctx.location}" in text
    assert "Store format: FakeEngine" in text  # neither an embedded nor a Qdrant store: its engine's kind


def test_about_wraps_a_long_model_path_inside_the_dialog(qtbot):
    """Found at 1280×720 (issue 36): About cut the model path, a word without spaces."""
    from memsense_gui.views.about import AboutDialog

    path = "/home/someone/.cache/memsense/models/" + "sentence-transformers_all-MiniLM-L6-v2_onnx_quantized/" * 3 + "model"
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    dialog.set_store([("Embedding model", f"all-MiniLM-L6-v2 ({path})")])
    dialog.show()
    qtbot.waitExposed(dialog)
    label = dialog.rows["Embedding model"]
    assert dialog.width() <= 700 and label.geometry().right() <= dialog.width()
    assert label.height() >= 3 * label.fontMetrics().height()  # wrapped over lines, not cut
    assert f"Embedding model: all-MiniLM-L6-v2 ({path})" in dialog.text()  # copied whole, no hidden marks
    assert label.toolTip() == f"all-MiniLM-L6-v2 ({path})"


def test_about_on_the_real_demo_store_names_its_format_and_model(qtbot):
    """The real engine on the LoCoMo dev store (read-only): format, model name and identity."""
    from pathlib import Path

    import pytest

    from core.recall.embedded.store import FORMAT
    from memsense_gui.views.about import store_facts

    location = Path("/work/stores/locomo")
    if not (location / "memsense.sqlite").exists():
        pytest.skip("no LoCoMo dev store on this machine")
    from core.recall.engine import Engine

    engine = Engine(location)
    try:
        facts = dict(store_facts(engine, str(location)))
    finally:
        engine.close()
    assert facts["Store format"] == f"embedded folder store, format {FORMAT}"
    assert facts["Model identity"].startswith(engine.embedder.key)
    assert Path(engine.model_path).name in facts["Embedding model"]
