"""Diagnose and Find a fix driven as a user would, on the demo store and the demo questions, each
figure checked against core computed directly on the same pools and settings."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt

from core.evaluation.diagnose import RETURNED, diagnose
from core.evaluation.history import History, history_path
from core.evaluation.judged import session_docid, session_qrels
from core.evaluation.metrics import relevant_of
from core.evaluation.question_set import planned_depth
from core.rank.rerank import rerank
from core.recall.pool import deepest
from memsense_gui.models.failures import LostSessionsModel
from memsense_gui.state import paths
from memsense_gui.views.dock import DockId
from memsense_gui.window.failures_actions import install_failures
from memsense_gui.window.main_window import MainWindow
from memsense_gui.workers.failure_jobs import pools_at
from tests.gui.fixtures import panel_shows, undo_keys

pytestmark = pytest.mark.slow
TRIALS = 24


@pytest.fixture
def window(qtbot, app_home, gui_store, model_cache):
    from core.recall.engine import Engine

    w = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: Engine(loc, cache_dir=model_cache))
    w.failures = install_failures(w)
    w.failures.jobs = 1  # the test machine's cores are shared: the search runs in this process
    qtbot.addWidget(w)
    w.resize(1500, 950)
    w.show()
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=180_000):
        w.stores.open_store(gui_store)
    return w


def _click(qtbot, plot, scene_point) -> None:
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=plot.mapFromScene(scene_point))


def _recall_all(pool, question, cfg) -> float:
    """recall_all@top_k straight from a re-rank: every gold session among the results."""
    ranking = rerank(pool, cfg)
    by_id = {c.memory_id: c.session_number for c in ranking.pool.chunks}
    returned = {by_id[m] for m in ranking.result_ids}
    return float(relevant_of(session_qrels(question)) <= returned)


def test_diagnose_open_a_case_find_a_fix_and_apply_it(qtbot, window, gui_store):
    w, actions = window, window.failures
    view, fix = actions.diagnose_view, actions.fix_view
    w.raise_dock(DockId.DIAGNOSE)
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.run is not None, timeout=180_000)

    # the totals are core's diagnose on the same questions, pools and settings, and sum to the gold sessions
    cfg = w.ctx.current.config
    recalled = actions.source.cases(planned_depth([cfg]), lambda *_: None, threading.Event())
    questions, pools = list(recalled.questions), pools_at(recalled.pools, cfg.route_limit)
    chunks_of = {u: w.ctx.engine.chunks(u) for u in {q.user_id for q in questions}}
    expected = diagnose(pools, questions, cfg, chunks_of)
    got = view.run.diagnosis
    assert got.stages == expected.stages and got.per_category == expected.per_category
    assert sum(got.stages.values()) == sum(len(relevant_of(session_qrels(q))) for q in questions) == len(got.items)
    assert view.bars.rows[0][2] == expected.stages
    assert "Out of date" not in view.status.text()

    # a click on a bar segment lists that stage's cases
    stage = max((s for s in expected.stages if s not in RETURNED), key=lambda s: expected.stages[s])
    assert expected.stages[stage] > 0
    _click(qtbot, view.bars, view.bars.point_of(None, stage))
    at_stage = [i for i in expected.items if i.stage == stage]
    assert sorted((i for g in view.model.rows for i in g.shown), key=str) == sorted(at_stage, key=str)
    ids = [g.first.question_id for g in view.model.rows]  # each question once, with its lost count
    assert len(ids) == len(set(ids)) == len({i.question_id for i in at_stage})
    for g in view.model.rows:
        assert g.lost == sum(1 for i in expected.items if i.question_id == g.first.question_id
                             and i.stage not in RETURNED)
    assert f"<b>{len(ids)}</b> questions of all questions" in view.cases_label.text()

    # Enter on a case opens it in the main view, and "Why not?" shows its chunk with the same status
    view.table.setFocus()
    view.table.setCurrentIndex(view.proxy.index(0, LostSessionsModel.QUESTION))
    item = view.model.item(view.proxy.mapToSource(view.table.currentIndex()).row())
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=60_000):
        qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert w.query_edit.text() == item.query and w.user_combo.currentText() == item.user_id
    q = next(q for q in questions if q.question_id == item.question_id)
    assert w.ctx.session.gold == frozenset(session_docid(q.user_id, s) for s in q.gold_sessions)
    pins = w.whynot_panel.pins_model
    row = pins.row_of(item.memory_id)
    qtbot.waitUntil(lambda: pins.fate(pins.row_of(item.memory_id)).status != "updating", timeout=30_000)
    ranking = w.ctx.session.ranking
    core_fate = ranking.fate(item.memory_id, deepest(w.ctx.session.pool))
    assert pins.fate(pins.row_of(item.memory_id)).status == core_fate.status == item.stage
    assert row is not None and w.whynot_panel.shown_pin() == item.memory_id

    # the selected failing cases -> Find a fix: every candidate's fixed / broken is a direct re-rank's
    w.raise_dock(DockId.DIAGNOSE)
    view.show_segment(None, "")  # every lost gold session
    view.table.selectAll()
    cases = view.selected_cases()[:4]
    view.table.clearSelection()
    for r in range(view.proxy.rowCount()):
        if view.model.item(view.proxy.mapToSource(view.proxy.index(r, 0)).row()).question_id in cases:
            view.table.selectionModel().select(view.proxy.index(r, 0), view.table.selectionModel().SelectionFlag.Select
                                               | view.table.selectionModel().SelectionFlag.Rows)
    assert set(view.selected_cases()) == set(cases)
    fix.trials.setValue(TRIALS)
    qtbot.mouseClick(view.fix_button, Qt.MouseButton.LeftButton)
    assert fix.cases == cases
    qtbot.waitUntil(lambda: fix.run is not None, timeout=300_000)
    result = fix.run.result
    assert result.trials == TRIALS and fix.model.rowCount() == len(result.candidates) > 0
    fix_pools = pools_at(recalled.pools, cfg.route_limit)
    before = {q.question_id: _recall_all(fix_pools[q.question_id], q, cfg) for q in questions}
    for c in result.candidates:
        after = {q.question_id: _recall_all(pools_at(recalled.pools, c.config.route_limit)[q.question_id], q, c.config)
                 for q in questions}
        assert set(c.fixed) == {k for k in before if after[k] > before[k]}
        assert set(c.broken) == {k for k in before if after[k] < before[k]}
        assert set(c.cases_fixed) == set(c.fixed) & set(cases)

    # a click on a Pareto point selects its candidate; Apply (through its diff) sets it, Ctrl+Z restores
    last = len(result.candidates) - 1
    _click(qtbot, fix.plot, fix.plot.point_of(last))
    assert fix.selected_row() == last
    chosen = result.candidates[last]
    qtbot.mouseClick(fix.apply_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(w.applying.dialog.apply_button, Qt.MouseButton.LeftButton)
    assert w.ctx.current.config == chosen.config and panel_shows(w.tuning, chosen.config)
    undo_keys(qtbot, w)
    assert w.ctx.current.config == cfg and panel_shows(w.tuning, cfg)

    # both runs are in the store's history
    with History(history_path(gui_store), create=False) as history:
        kinds = [r.kind for r in history.runs()]
    assert "diagnose" in kinds and "fix" in kinds
