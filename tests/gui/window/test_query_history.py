"""Typed queries are remembered, newest first, and offered again by the query box."""
from __future__ import annotations

from memsense_gui.state import paths
from memsense_gui.window.main_window import MainWindow


def test_queries_are_remembered_across_sessions(qtbot, make_window, app_home):
    w = make_window()
    for query in ("where did they travel", "what pets", "where did they travel"):
        w.query_edit.setText(query)
        with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
            w.queries.run_query()
    assert w.history.queries == ["where did they travel", "what pets"]
    w.history.completer.setCompletionPrefix("pets")
    assert w.history.completer.currentCompletion() == "what pets"
    w.close()
    again = MainWindow(app_home, paths.settings(app_home))
    qtbot.addWidget(again)
    assert again.history.queries == ["where did they travel", "what pets"]
