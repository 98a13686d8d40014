"""Diagnose keeps to the current settings and questions (never old figures without saying so), and
Find a fix takes its cases from Cases; on the fake engine's synthetic pools, so it is quick."""
from __future__ import annotations

import json
import threading
from dataclasses import replace

from PySide6.QtCore import QItemSelectionModel, Qt

from core.evaluation.diagnose import STAGES, diagnose
from core.evaluation.question_set import planned_depth
from memsense_gui.plots.stages import segment_at
from memsense_gui.views.dock import DockId
from memsense_gui.window.failures_actions import install_failures
from memsense_gui.workers.failure_jobs import pools_at
from tests.gui.fixtures import eval_questions


def _questions_file(tmp_path, n=5):
    items = [{"user": q.user_id, "question": q.text, "answer": "", "category": q.category,
              "evidence": [f"D{s}:1" for s in q.gold_sessions]} for q in eval_questions(n=n)]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    return path


def _window(make_window, tmp_path):
    w = make_window()
    actions = install_failures(w)
    actions.jobs = 1
    actions.source.set_path(_questions_file(tmp_path))
    return w, actions


def test_diagnose_follows_the_settings_and_says_when_it_is_out_of_date(qtbot, make_window, tmp_path):
    w, actions = _window(make_window, tmp_path)
    view = actions.diagnose_view
    w.raise_dock(DockId.DIAGNOSE)
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.run is not None, timeout=30_000)
    cfg = w.ctx.current.config
    recalled = actions.source.cases(planned_depth([cfg]), lambda *_: None, threading.Event())
    chunks = {u: w.ctx.engine.chunks(u) for u in {q.user_id for q in recalled.questions}}
    expected = diagnose(pools_at(recalled.pools, cfg.route_limit), recalled.questions, cfg, chunks)
    assert view.run.diagnosis.stages == expected.stages
    assert "not kept in the history" in view.status.text()  # the fake store has no history to keep it in

    # a settings change marks the figures out of date at once, then diagnoses again (the dock is shown)
    wider = replace(cfg, top_k=cfg.top_k + 4)
    w.ctx.current.apply(wider, "test settings")
    assert "Out of date" in view.status.text()
    qtbot.waitUntil(lambda: view.run.config == wider and "Out of date" not in view.status.text(), timeout=30_000)
    assert view.run.diagnosis.k == wider.top_k

    # hidden behind another tab: marked, not run; shown again: diagnosed again
    w.raise_dock(DockId.ROUTE_RANKS)
    qtbot.waitUntil(lambda: not w.showing(DockId.DIAGNOSE), timeout=5_000)
    w.ctx.current.apply(cfg, "test settings")
    qtbot.wait(2 * 300)
    assert view.run.config == wider and "Out of date" in view.status.text()
    w.raise_dock(DockId.DIAGNOSE)
    qtbot.waitUntil(lambda: view.run.config == cfg and "Out of date" not in view.status.text(), timeout=30_000)


def test_find_a_fix_takes_the_cases_selected_in_cases(qtbot, make_window, tmp_path):
    w, actions = _window(make_window, tmp_path)
    fix = actions.fix_view
    actions.fix_selected()  # nothing selected anywhere: it says what to do
    assert "Select one or more failing cases" in fix.status.text() and fix.run is None
    panel = w.cases_panel
    w.raise_dock(DockId.CASES)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 10 and panel.model.counts()[1] == 10, timeout=30_000)
    failing = [r for r in range(panel.model.rowCount()) if panel.model.passed(r) is False][:2]
    assert failing
    selection = panel.view.selectionModel()
    for r in failing:
        selection.select(panel.filter.mapFromSource(panel.model.index(r, 0)),
                         QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    fix.trials.setValue(8)
    qtbot.mouseClick(panel.fix_button, Qt.MouseButton.LeftButton)
    assert fix.cases == tuple(panel.model.question(r).question_id for r in failing)
    assert w.showing(DockId.FIX)
    qtbot.waitUntil(lambda: fix.run is not None, timeout=60_000)
    assert fix.run.result.trials == 8 and fix.run.start == w.ctx.current.config
    assert fix.model.rowCount() == len(fix.run.result.candidates)


def test_a_click_finds_its_segment():
    counts = {s: 0 for s in STAGES} | {"outranked": 1, "selected": 3}
    rows = [(None, "all", counts)]
    assert segment_at(rows, 0.1, 0.0) == (None, "outranked")  # the first quarter
    assert segment_at(rows, 0.5, 0.1) == (None, "selected")
    assert segment_at(rows, 0.5, 0.6) is None  # between bars
    assert segment_at(rows, 1.2, 0.0) is None  # past the end


def test_the_pareto_line_steps_through_the_points_nothing_beats():
    from memsense_gui.plots.pareto import front_line

    points = [(43, 4), (62, 4), (63, 3), (12, 2), (36, 3), (42, 3), (74, 4)]
    assert front_line(points) == [(12, 2), (36, 2), (36, 3), (43, 3), (43, 4)]


def test_cancelling_a_search_keeps_what_it_found(qtbot, make_window, tmp_path):
    w, actions = _window(make_window, tmp_path)
    fix = actions.fix_view
    cfg = w.ctx.current.config
    recalled = actions.source.cases(planned_depth([cfg]), lambda *_: None, threading.Event())
    from core.evaluation.evaluate import evaluate_config

    scores = evaluate_config(pools_at(recalled.pools, cfg.route_limit), recalled.questions, cfg, cfg.top_k)
    failing = [o.question_id for o in scores.outcomes if o.metrics[f"recall_all@{cfg.top_k}"] < 1][:3]
    assert failing
    fix.trials.setValue(5000)
    actions.find_fix(failing, "a test")
    qtbot.waitUntil(lambda: fix.progress.value() >= 20, timeout=60_000)
    qtbot.mouseClick(fix.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: fix.run is not None, timeout=60_000)
    result = fix.run.result
    assert result.cancelled and 20 <= result.trials < 5000
    assert fix.status.text().startswith("cancelled after") and fix.model.rowCount() == len(result.candidates)


def _failing(actions, w, n=3):
    cfg = w.ctx.current.config
    recalled = actions.source.cases(planned_depth([cfg]), lambda *_: None, threading.Event())
    from core.evaluation.evaluate import evaluate_config

    scores = evaluate_config(pools_at(recalled.pools, cfg.route_limit), recalled.questions, cfg, cfg.top_k)
    return [o.question_id for o in scores.outcomes if o.metrics[f"recall_all@{cfg.top_k}"] < 1][:n]


def test_another_store_stops_a_search_and_its_candidates_say_they_are_of_the_store_before(qtbot, make_window,
                                                                                           tmp_path):
    """Found by a walkthrough: a search running when another store opened went on, and its result
    was then shown as current, with the store before's question count."""
    w, actions = _window(make_window, tmp_path)
    fix = actions.fix_view
    fix.trials.setValue(5000)
    actions.find_fix(_failing(actions, w), "a test")
    qtbot.waitUntil(lambda: fix.progress.value() >= 10, timeout=60_000)
    with qtbot.waitSignal(w.ctx.store_opened, timeout=10_000):
        w.stores.open_store(str(tmp_path / "other"))
    qtbot.waitUntil(lambda: fix.run is not None, timeout=60_000)
    assert fix.run.result.cancelled and fix.run.result.trials < 5000
    assert fix.status.text().startswith("<b>Out of date:</b> another store was opened while it searched")


def test_a_diagnose_running_when_another_store_opens_stops_and_says_why(qtbot, make_window, tmp_path):
    """Found by a walkthrough: it went on reading the closed store and failed with advice to delete
    the embedding cache."""
    w, actions = _window(make_window, tmp_path)
    view = actions.diagnose_view
    w.engines[-1].delay = 0.05  # each recall of the fake engine takes this long: the diagnose is still running
    w.raise_dock(DockId.ROUTE_RANKS)  # hidden: the new store is not diagnosed again at once
    task = actions.diagnose()
    qtbot.waitUntil(lambda: not view.progress.isHidden(), timeout=10_000)  # running (its dock is in Diagnose)
    with qtbot.waitSignal(w.ctx.store_opened, timeout=10_000):
        w.stores.open_store(str(tmp_path / "other"))
    qtbot.waitUntil(lambda: task.done, timeout=30_000)
    assert view.status.text() == "Diagnose stopped: another store was opened." and view.run is None


def test_a_failed_diagnose_marks_the_figures_before_as_the_earlier_run(qtbot, make_window, tmp_path):
    w, actions = _window(make_window, tmp_path)
    view = actions.diagnose_view
    w.raise_dock(DockId.DIAGNOSE)
    actions.diagnose()
    qtbot.waitUntil(lambda: view.run is not None, timeout=30_000)
    other = tmp_path / "others.json"
    user = w.ctx.users[0]
    other.write_text(json.dumps({"questions": [{"user": user, "question": "q?", "answer": "", "category": 1,
                                                "evidence": ["D1:1"]}]}))
    actions.source.set_path(other)
    other.write_text("{ no longer a question file", encoding="utf-8")  # changed on disk after it was chosen
    actions.diagnose()
    qtbot.waitUntil(lambda: not view.progress.isVisible(), timeout=30_000)
    assert view.status.text().startswith("<b>Out of date:</b> diagnose failed: ") and "others.json" in view.status.text()
    assert view.status.text().endswith("The figures below are of the earlier run.")


def test_find_a_fix_is_current_again_when_undo_puts_its_settings_back(qtbot, make_window, tmp_path):
    """Found by a walkthrough: after applying a candidate and Ctrl+Z, the settings were those the
    search started from, and the view still said they differ."""
    w, actions = _window(make_window, tmp_path)
    fix = actions.fix_view
    fix.trials.setValue(8)
    actions.find_fix(_failing(actions, w), "a test")
    qtbot.waitUntil(lambda: fix.run is not None, timeout=60_000)
    summary = fix.status.text()
    start = w.ctx.current.config
    w.ctx.current.apply(replace(start, top_k=start.top_k + 1), "test settings")
    assert fix.status.text().startswith("<b>Out of date:</b> the settings differ")
    w.ctx.current.apply(start, "test settings")
    assert fix.status.text() == summary


def test_the_app_s_diagnose_reads_no_chunk_from_the_store_and_re_ranks_each_question_once(qtbot, make_window,
                                                                                       tmp_path, monkeypatch):
    import core.evaluation.diagnose as diagnose_module
    import core.evaluation.evaluate as evaluate_module

    w, actions = _window(make_window, tmp_path)
    reranks = []
    real = diagnose_module.rerank

    def counted(pool, cfg, *a, **k):
        reranks.append(pool.query)
        return real(pool, cfg, *a, **k)

    monkeypatch.setattr(diagnose_module, "rerank", counted)
    monkeypatch.setattr(evaluate_module, "rerank", counted)
    engine = w.ctx.engine
    calls_before = list(engine.calls)
    actions.diagnose()
    qtbot.waitUntil(lambda: actions.diagnose_view.run is not None, timeout=30_000)
    run = actions.diagnose_view.run
    assert len(reranks) == len(run.questions)
    assert "chunks" not in engine.calls[len(calls_before):]  # every user's chunks came with the pools
    assert w.engines == [engine]  # no second store opened


def _kept_runs(w) -> list[int]:
    from core.evaluation.history import History

    path = w.ctx.runs.path()
    if path is None or not path.exists():
        return []
    with History(path, create=False) as history:
        return history.run_ids()


def test_settings_changes_re_diagnose_without_keeping_runs_and_diagnose_keeps_one(qtbot, make_window, tmp_path):
    """Found in use: with Diagnose on screen every slider move re-diagnosed and kept a run, filling Runs."""
    w, actions = _window(make_window, tmp_path)
    view = actions.diagnose_view
    w.ctx.open_workspace().model = "fake-model"  # the fake store names no model: with one its diagnoses are kept
    w.raise_dock(DockId.DIAGNOSE)
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.run is not None, timeout=30_000)
    assert view.run.run_id is not None and _kept_runs(w) == [view.run.run_id]
    slider = w.tuning.sliders["mmr_lambda"]
    for value in (0.7, 0.6, 0.5):
        slider.setValue(value)
        qtbot.waitUntil(lambda: view.run.config == w.ctx.current.config and not view.stale, timeout=30_000)
        assert view.run.config.mmr_lambda == value and view.run.run_id is None
        assert "not kept in the history: Diagnose keeps a run" in view.status.text()
    assert len(_kept_runs(w)) == 1

    # the menu's Diagnose: one run more
    menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Diagnose")
    next(a for a in menu.actions() if a.text().startswith("&Diagnose")).trigger()
    qtbot.waitUntil(lambda: view.run.run_id is not None, timeout=30_000)
    assert len(_kept_runs(w)) == 2 and _kept_runs(w)[-1] == view.run.run_id
    assert f"history run {view.run.run_id}" in view.status.text()
