"""A Find a fix candidate applies as every suggestion does: its settings diff and the rank movement
it causes first (the window's Apply dialog), Cancel changing nothing, Apply one undo step."""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt

from core.evaluation.fix import FixCandidate, FixResult
from core.rank.rerank import rerank
from memsense_gui.views.apply_diff import rank_moves, settings_diff
from memsense_gui.views.dock import DockId
from memsense_gui.window.failures_actions import install_failures
from memsense_gui.workers.failure_jobs import FixRun
from tests.gui.fixtures import panel_shows, result_ids, undo_keys

CLICK = Qt.MouseButton.LeftButton


def _candidate(start, **knobs) -> FixCandidate:
    cfg = replace(start, **knobs)
    changed = {name: (before, after) for name, after, before in settings_diff(cfg, start)}
    return FixCandidate(cfg, changed, ("q1",), ("q1",), (), 0.5, 0.75, 0.04)


def test_a_fix_candidate_shows_its_diff_cancel_keeps_all_apply_is_one_undo_step(qtbot, make_window):
    w = make_window()
    actions = install_failures(w)
    w.query_edit.setText("what did they say about travel")
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        qtbot.mouseClick(w.run_button, CLICK)
    session, fix = w.ctx.session, actions.fix_view
    current = w.ctx.current
    start, shown = current.config, result_ids(w)
    candidate = _candidate(start, mmr_lambda=0.3, top_k=start.top_k + 2)
    fix.show_run(FixRun(start, FixResult("recall_all@4", ("q1",), 5, (candidate,)), 5, None, "not kept"))
    w.raise_dock(DockId.FIX)
    assert fix.selected_row() == 0 and fix.apply_button.isEnabled()

    # the diff first: the settings that change and the movement, by core's own re-rank
    qtbot.mouseClick(fix.apply_button, CLICK)
    dialog = w.applying.dialog
    assert dialog.isVisible() and dialog.windowTitle() == "Apply fix candidate 1?"
    table = dialog.settings_table
    assert [tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())] == \
        [(n, f"{a:g}" if isinstance(a, float) else str(a), f"{b:g}" if isinstance(b, float) else str(b))
         for n, a, b in settings_diff(start, candidate.config)]
    assert table.rowCount() == 2
    moves = rank_moves(session.ranking, rerank(session.pool, candidate.config))
    assert [dialog.moves_table.item(r, 3).text() for r in range(dialog.moves_table.rowCount())] == \
        [m.text() for m in moves]
    assert current.config == start  # nothing applied while the dialog is open

    # Cancel: nothing changes, nothing to undo
    qtbot.mouseClick(dialog.cancel_button, CLICK)
    assert current.config == start and panel_shows(w.tuning, start) and result_ids(w) == shown and w.ctx.current.stack.count() == 0

    # Apply: the candidate's settings, one undo step; Ctrl+Z and Ctrl+Shift+Z
    qtbot.mouseClick(fix.apply_button, CLICK)
    qtbot.mouseClick(w.applying.dialog.apply_button, CLICK)
    expected = list(rerank(session.pool, candidate.config).result_ids)
    assert current.config == candidate.config and panel_shows(w.tuning, candidate.config) and result_ids(w) == expected
    assert w.ctx.current.stack.count() == 1 and w.ctx.current.stack.undoText() == "apply fix candidate 1"
    undo_keys(qtbot, w)
    assert current.config == start and panel_shows(w.tuning, start) and result_ids(w) == shown
    undo_keys(qtbot, w, redo=True)
    assert current.config == candidate.config and result_ids(w) == expected
