"""One recall per question set in the app: Cases, then Evaluation, then Auto-tune (a split and a
cross-validation) evaluate the same questions, and the engine recalls each of them once in all."""
from __future__ import annotations

from dataclasses import replace

from memsense_gui.views.dock import DockId
from memsense_gui.window.evaluation import install_evaluation
from tests.gui.fixtures import per_user_items, questions_file, run_autotune


def test_cases_evaluation_and_autotune_share_one_recall(qtbot, make_window, tmp_path):
    w = make_window()
    engine = w.engines[-1]
    items = per_user_items(w.ctx.users, per_user=4)
    view = install_evaluation(w)
    w.cases.source.set_path(questions_file(tmp_path, items))  # chosen in Cases: the Evaluation view's too
    assert view.source.path == w.cases.source.path and view.source.label() == w.cases.source.label()

    panel = w.cases_panel
    w.raise_dock(DockId.CASES)
    qtbot.waitUntil(lambda: panel.model.counts()[1] == len(items), timeout=30_000)
    asked = sorted((i["user"], i["question"]) for i in items)
    assert sorted(engine.recalls) == asked

    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000) as done:
        view.start()
    assert all(r.questions == len(items) for r in done.args[0])
    result = run_autotune(qtbot, view.autotune, folds=1, trials=4)
    assert len(result.trials) == 4 and result.train_questions + result.test_questions == len(items)
    cv = run_autotune(qtbot, view.autotune, folds=2, trials=3)
    assert cv.questions == len(items)
    assert sorted(engine.recalls) == asked  # each question recalled once, for all three views

    # settings change re-ranks the same pools; another store recalls again
    before = panel.model.metric
    w.ctx.current.apply(replace(w.ctx.current.config, top_k=9), "test settings")
    qtbot.waitUntil(lambda: panel.model.metric != before, timeout=10_000)
    assert sorted(engine.recalls) == asked
    with qtbot.waitSignal(w.ctx.model_loaded, timeout=10_000):
        w.stores.open_store(str(tmp_path / "another"))
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    assert w.engines[-1] is not engine and sorted(w.engines[-1].recalls) == asked


def test_a_view_waiting_for_another_recall_does_not_recall_again(qtbot, make_window, tmp_path):
    w = make_window(delay=0.05)  # each recall takes a while: Evaluation starts while Cases recalls
    items = per_user_items(w.ctx.users, per_user=3)
    view = install_evaluation(w)
    view.source.set_path(questions_file(tmp_path, items))
    w.raise_dock(DockId.CASES)
    qtbot.waitUntil(lambda: len(w.engines[-1].recalls) >= 1, timeout=10_000)
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    qtbot.waitUntil(lambda: w.cases_panel.model.counts()[1] == len(items), timeout=30_000)
    assert sorted(w.engines[-1].recalls) == sorted((i["user"], i["question"]) for i in items)


def test_the_trec_run_export_shares_the_question_set_recall(qtbot, make_window, tmp_path):
    """Questions judged in the app: the run export and the Evaluation view recall each once in all."""
    from tests.gui.window.test_judging_actions import QUERY, run

    w = make_window()
    view = install_evaluation(w)
    view.source.use_app_judged()
    for user, query in (("synth-a", QUERY), ("synth-b", "which pets")):
        run(qtbot, w, query, user)
        w.results.select_position(0)
        assert w.judging.grade_selected(2)
    engine = w.engines[-1]
    searched = list(engine.recalls)  # the searches that showed the results graded
    judged = [("synth-a", QUERY), ("synth-b", "which pets")]

    with qtbot.waitSignal(w.ctx.run_exported, timeout=10_000):
        assert w.judging.export_run(tmp_path / "first.run") is not None
    assert sorted(engine.recalls[len(searched):]) == judged  # the run recalled the judged questions once
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000) as done:
        view.start()
    assert {r.questions for r in done.args[0]} == {2}
    with qtbot.waitSignal(w.ctx.run_exported, timeout=10_000):
        assert w.judging.export_run(tmp_path / "again.run") is not None
    assert sorted(engine.recalls[len(searched):]) == judged  # Evaluation and the second run re-ranked them
    assert (tmp_path / "first.run").read_text() == (tmp_path / "again.run").read_text()


def test_evaluation_cases_and_diagnose_share_the_context_s_one_workspace(qtbot, make_window, tmp_path):
    """One question set and one workspace for the window: Diagnose re-ranks the pools Evaluation recalled."""
    from memsense_gui.window.failures_actions import install_failures

    w = make_window()
    engine = w.engines[-1]
    items = per_user_items(w.ctx.users, per_user=3)
    view = install_evaluation(w)
    actions = install_failures(w)
    assert view.source is w.cases.source is actions.source is w.ctx.evaluation
    w.ctx.evaluation.set_path(questions_file(tmp_path, items))
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    recalled = list(engine.recalls)
    assert sorted(recalled) == sorted((i["user"], i["question"]) for i in items)
    actions.diagnose()
    qtbot.waitUntil(lambda: actions.diagnose_view.run is not None, timeout=30_000)
    assert engine.recalls == recalled  # diagnose recalled nothing: the workspace had every pool
    assert len(actions.diagnose_view.run.questions) == len(items)
    assert w.ctx.open_workspace() is w.ctx.open_workspace()  # one per open store
