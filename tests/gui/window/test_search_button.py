"""The Search button searches, as Enter in the query box does (issue 18 item 0)."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.config import Config
from core.rank.rerank import rerank
from tests.gui.fixtures import error_boxes, result_ids


def test_clicking_search_runs_the_query(qtbot, make_window):
    window = make_window()
    qtbot.keyClicks(window.query_edit, "where did they travel")
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=5000):
        qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    engine = window.engines[-1]
    assert engine.recalls == [("synth-a", "where did they travel")]
    assert result_ids(window) == rerank(window.ctx.session.pool, Config()).result_ids
    assert not error_boxes(window)
