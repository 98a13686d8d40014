"""Impact, History and File > Export report, driven as a user would in the window over fake engines."""
from __future__ import annotations

from html.parser import HTMLParser

from PySide6.QtCore import QPoint, Qt

from core.config.presets import BUILTIN
from core.evaluation.history import History, compare_runs
from core.evaluation.impact import impact, read_queries
from core.rank.rerank import rerank
from memsense_gui.views.apply_diff import rank_moves, settings_diff
from memsense_gui.models.impact import OVERLAP, RBO
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.views.dock import DockId
from memsense_gui.window.evaluation import install_evaluation
from memsense_gui.window.run_actions import install_runs, report_dialogs
from tests.gui.fixtures import error_boxes, panel_shows, result_ids, undo_keys

QUERIES = ["what did they say about travel", "plans for the weekend", "the dentist appointment",
           "which book did they like", "a trip to the mountains"]


def query_file(tmp_path, users):
    path = tmp_path / "queries.tsv"
    path.write_text("# real queries\n" + "".join(f"{users[i % len(users)]}\t{q}\n" for i, q in enumerate(QUERIES)),
                    encoding="utf-8")
    return path


def installed(window):
    return install_runs(window, install_evaluation(window))


def click_header(qtbot, table, column):
    header = table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))


def column_values(table, column):
    proxy = table.model()
    return [proxy.index(r, column).data(RAW_ROLE) for r in range(proxy.rowCount())]


def run_impact(qtbot, view):
    with qtbot.waitSignal(view.impact_finished, timeout=30_000) as blocker:
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def test_impact_equals_core_sorts_and_opens_a_query_with_a_as_baseline(qtbot, make_window, tmp_path):
    window = make_window()
    views = installed(window)
    view = views.impact
    assert window.dock(DockId.IMPACT).view is view
    path = query_file(tmp_path, window.ctx.users)
    assert view.set_queries(path)
    view.b_choice.choose("preset", "bm25_only")
    shown = run_impact(qtbot, view)
    # the same figures as core's impact over the same engine, queries and configs
    engine = window.engines[-1]
    direct = impact(lambda u, q, d: engine.recall(u, q, d), read_queries(str(path)), BUILTIN["memsense"],
                    BUILTIN["bm25_only"])
    assert shown.to_json() == direct.to_json()
    totals = direct.totals()
    assert f"mean RBO (p = 0.9) {totals['mean_rbo']:.3f}" in view.totals.text()
    assert view.model.rowCount() == len(QUERIES) and not view.is_stale
    # every column sorts, on core's raw values
    for column, values in ((RBO, [q.rbo for q in direct.queries]), (OVERLAP, [q.overlap for q in direct.queries])):
        click_header(qtbot, view.table, column)
        got = column_values(view.table, column)
        assert got in (sorted(values), sorted(values, reverse=True))
        click_header(qtbot, view.table, column)
        assert column_values(view.table, column) == got[::-1]
    # double-click the query that moved most: it opens with A pinned as the baseline and B as the settings
    click_header(qtbot, view.table, RBO)
    if column_values(view.table, RBO)[0] > column_values(view.table, RBO)[-1]:
        click_header(qtbot, view.table, RBO)
    window.raise_dock(DockId.IMPACT)
    index = view.table.model().index(0, 1)
    pos = view.table.visualRect(index).center()
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)  # as a user's double-click begins
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=10_000):
        qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    moved = min(direct.queries, key=lambda q: q.rbo)
    session = window.ctx.session
    current = window.ctx.current
    assert (session.pool.user_id, session.pool.query) == (moved.user_id, moved.query)
    assert session.pinned_baseline.config == BUILTIN["memsense"]
    assert current.config == BUILTIN["bm25_only"] and panel_shows(window.tuning, BUILTIN["bm25_only"])
    assert window.ctx.current.stack.count() == 1 and window.ctx.current.stack.undoText().startswith("apply impact B")
    assert tuple(session.ranking.result_ids) == moved.b
    # B is now the current settings; choosing something else for B marks the figures stale
    view.b_choice.choose("preset", "dense_only")
    assert view.is_stale and "B" in view.stale.text()
    view.b_choice.choose("preset", "bm25_only")
    assert not view.is_stale
    assert not error_boxes(window)


def test_impact_says_what_is_wrong_in_one_dialog_line(qtbot, make_window, tmp_path):
    window = make_window()
    view = installed(window).impact
    errors = []
    window.ctx.error_reported.connect(errors.append)
    assert view.start() is None  # no query file yet
    bad = tmp_path / "bad.tsv"
    bad.write_text("nobody\twhere is it\n", encoding="utf-8")
    assert view.set_queries(bad)
    assert view.start() is None  # a user the store lacks
    assert view.set_queries(tmp_path / "missing.tsv") is False
    assert len(errors) == 3 and "query file" in errors[0] and "no user nobody" in errors[1]


def evaluate(qtbot, window, view, k=4):
    view.k_spin.setValue(k)
    with qtbot.waitSignal(window.ctx.runs.recorded, timeout=30_000) as kept:
        with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
            view.start()
    return kept.args[0]


def test_history_keeps_runs_across_windows_compares_and_reopens_settings(qtbot, make_window, evaluation_window):
    window, evaluation = evaluation_window("judged")
    first = install_runs(window, evaluation)
    ids = [evaluate(qtbot, window, evaluation, k) for k in (4, 4)]
    qtbot.waitUntil(lambda: first.history.runs_model.rowCount() == 2, timeout=10_000)
    path = window.ctx.runs.path()
    window.close()
    # a second window on the same store (a restart): the runs are listed again
    again = make_window()
    views = install_runs(again, install_evaluation(again))
    history = views.history
    qtbot.waitUntil(lambda: history.runs_model.rowCount() == 2, timeout=10_000)
    assert [r.id for r in history.runs_model.runs] == ids
    assert history.runs_model.runs[0].kind == "eval"
    # two runs: compared question by question, as stored
    history.select_runs(ids)
    history.config_a.setCurrentText("memsense")
    history.config_b.setCurrentText("bm25_only")
    history.metric_combo.setCurrentText("recall_any@4")
    with History(path, create=False) as kept:
        a, b = kept.run(ids[0]), kept.run(ids[1])
    expected = compare_runs(a, b, "recall_any@4", "memsense", "bm25_only")
    model = history.diff_model
    assert model.rowCount() == len(expected.rows) > 0
    assert [tuple(model.raw(r, c) for c in range(3)) for r in range(model.rowCount())] == list(expected.rows)
    # the runs read again (a run kept, another process): the configs chosen stay chosen
    with qtbot.waitSignal(again.ctx.runs.listed, timeout=10_000):
        again.ctx.runs.list_runs()
    qtbot.waitUntil(lambda: [r.id for r in history.selected_runs()] == ids, timeout=10_000)
    assert (history.config_a.currentText(), history.config_b.currentText()) == ("memsense", "bm25_only")
    # one run: re-open its settings through the Apply dialog (diff and rank movement), then undo
    again.query_edit.setText(QUERIES[0])
    with qtbot.waitSignal(again.ctx.ranking_updated, timeout=10_000):
        qtbot.mouseClick(again.run_button, Qt.MouseButton.LeftButton)
    session, before, shown = again.ctx.session, again.ctx.current.config, result_ids(again)
    current = again.ctx.current
    history.select_runs([ids[1]])
    history.config_a.setCurrentText("bm25_only")
    after = b.config("bm25_only")
    qtbot.mouseClick(history.reopen_button, Qt.MouseButton.LeftButton)
    dialog = again.applying.dialog
    assert dialog.isVisible() and current.config == before
    assert [dialog.settings_table.item(r, 0).text() for r in range(dialog.settings_table.rowCount())] == \
        [name for name, _, _ in settings_diff(before, after)] != []
    moves = rank_moves(session.ranking, rerank(session.pool, after))
    assert [dialog.moves_table.item(r, 3).text() for r in range(dialog.moves_table.rowCount())] == \
        [m.text() for m in moves]
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)  # Cancel changes nothing
    assert current.config == before and again.ctx.current.stack.count() == 0 and result_ids(again) == shown
    qtbot.mouseClick(history.reopen_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(again.applying.dialog.apply_button, Qt.MouseButton.LeftButton)
    assert current.config == after != before and panel_shows(again.tuning, after)
    assert result_ids(again) == list(rerank(session.pool, after).result_ids)
    assert again.ctx.current.stack.count() == 1
    assert again.ctx.current.stack.undoText() == f"apply settings of run {ids[1]} (bm25_only)"
    undo_keys(qtbot, again)  # the user is back in this window
    assert current.config == before and result_ids(again) == shown
    undo_keys(qtbot, again, redo=True)
    assert current.config == after
    assert not error_boxes(again)


class _Svg(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs = 0

    def handle_starttag(self, tag, attrs):
        self.svgs += tag == "svg"


def test_export_report_from_the_file_menu(qtbot, evaluation_window, tmp_path):
    window, evaluation = evaluation_window("judged")
    views = install_runs(window, evaluation)
    views.actions.report_action.trigger()
    dialog = report_dialogs(window)[0]
    assert dialog.a_choice.chosen() == ("preset", "memsense")  # no baseline pinned: Memsense's own
    assert dialog.b_choice.chosen() == ("current", "")
    dialog.b_choice.choose("preset", "bm25_only")
    dialog.path_edit.setText(str(tmp_path / "report"))  # no extension: .html is added
    with qtbot.waitSignal(views.actions.report_slot.runner.task_done, timeout=60_000):
        dialog.accept()
    written = tmp_path / "report.html"
    page = written.read_text(encoding="utf-8")
    parser = _Svg()
    parser.feed(page)
    assert parser.svgs >= 2 and "bm25_only" in page and "<script" not in page
    assert "Wrote the report" in window.statusBar().currentMessage()
    assert not error_boxes(window)


def test_an_auto_tune_run_is_kept_and_listed(qtbot, evaluation_window):
    from tests.gui.fixtures import run_autotune

    window, evaluation = evaluation_window("per_user")
    views = install_runs(window, evaluation)
    with qtbot.waitSignal(window.ctx.runs.recorded, timeout=60_000) as kept:
        result = run_autotune(qtbot, evaluation.autotune, trials=4)
    qtbot.waitUntil(lambda: views.history.runs_model.rowCount() == 1, timeout=10_000)
    run = views.history.runs_model.runs[0]
    assert run.id == kept.args[0] and run.kind == "tune" and list(run.configs) == ["memsense", "tuned"]
    assert run.config("tuned") == result.best.config and run.summary["metric"] == result.metric
    assert run.mean(result.metric, "tuned") is not None  # every question scored under both


def test_impact_cancel_stops_the_run(qtbot, make_window, tmp_path):
    window = make_window(delay=0.3)
    view = installed(window).impact
    view.set_queries(query_file(tmp_path, window.ctx.users))
    task = view.start()
    qtbot.waitUntil(lambda: view.progress.value() >= 1, timeout=10_000)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: task.done, timeout=10_000)
    assert view.impact is None and "cancelled" in view.totals.text() and not view.cancel_button.isEnabled()
    assert len(window.engines[-1].recalls) < len(QUERIES)


def test_another_store_stops_an_impact_run_and_says_why(qtbot, make_window, tmp_path):
    """Found by a walkthrough: the run went on against the closed store and ended in a dialog
    advising to delete the embedding cache."""
    window = make_window(delay=0.3)
    view = installed(window).impact
    view.set_queries(query_file(tmp_path, window.ctx.users))
    task = view.start()
    qtbot.waitUntil(lambda: view.progress.value() >= 1, timeout=10_000)
    errors: list[str] = []
    window.ctx.error_reported.connect(errors.append)
    with qtbot.waitSignal(window.ctx.store_opened, timeout=10_000):
        window.stores.open_store(str(tmp_path / "other"))
    qtbot.waitUntil(lambda: task.done, timeout=10_000)
    assert errors == [] and view.impact is None
    assert view.totals.text().startswith("Impact stopped: another store was opened.")


def test_history_says_what_to_do_once_runs_are_listed(qtbot, evaluation_window):
    """Found by a walkthrough: the note kept saying 'No run kept yet' beside the runs listed."""
    window, evaluation = evaluation_window("judged")
    history = install_runs(window, evaluation).history
    qtbot.waitUntil(lambda: "No run kept yet" in history.note.text(), timeout=10_000)
    evaluate(qtbot, window, evaluation, 4)
    qtbot.waitUntil(lambda: history.runs_model.rowCount() == 1, timeout=10_000)
    assert history.note.text().startswith("Select one run to re-open its settings")


def test_export_report_refuses_a_bad_target_before_any_work(qtbot, evaluation_window, tmp_path):
    window, evaluation = evaluation_window("judged")
    actions = install_runs(window, evaluation).actions
    errors = []
    window.ctx.error_reported.connect(errors.append)
    current = ("current settings", window.ctx.current.config)
    assert actions.export_report(str(tmp_path / "no-such-folder" / "r.html"), current, current, 4) is None
    assert actions.export_report(str(tmp_path / "r.txt"), current, current, 4) is None
    assert len(errors) == 2 and "no-such-folder does not exist" in errors[0] and "must end in .html" in errors[1]
    assert not list(tmp_path.glob("r.*")) and actions.progress is None


def test_five_runs_compared_in_the_runs_view_as_the_cli_and_a_question_opened_with_a_run_s_settings(
        qtbot, capsys, evaluation_window, tmp_path):
    """Five kept runs selected: the Compare tab's figures are `memsense runs compare ... --json`'s; a run
    named in the view is named in the CLI; filters narrow the matrix; a double-click opens the question
    under that run's settings, one undo step."""
    import json

    from core.evaluation.experiments import compare_sides, run_names, side_of
    from tests.fixtures import run_cli

    window, evaluation = evaluation_window("judged")
    views = install_runs(window, evaluation)
    history = views.history
    ids = [evaluate(qtbot, window, evaluation, 4) for _ in range(5)]
    qtbot.waitUntil(lambda: history.runs_model.rowCount() == 5, timeout=20_000)
    history.select_runs([ids[2]])
    window.ctx.runs.name(ids[2], name="second look")
    qtbot.waitUntil(lambda: history.runs_model.names.get(ids[2], ("", ""))[0] == "second look", timeout=10_000)
    history.select_runs(ids)
    panel = history.comparison
    assert history.tabs.currentWidget() is panel
    panel.config_combo.setCurrentText("bm25_only")
    qtbot.waitUntil(lambda: panel.result is not None and len(panel.result.figures) == 5, timeout=20_000)
    shown = panel.result
    path = window.ctx.runs.path()
    store = str(path.parent / path.name.removesuffix(".history.sqlite"))
    code, out, err = run_cli(capsys, "runs", "compare", "--store", store, *[f"{i}:bm25_only" for i in ids],
                             "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(shown.to_json()))
    with History(path, create=False) as kept:
        names = run_names(kept)
        core = compare_sides([side_of(kept.run(i), "bm25_only", names.get(i, ("", ""))[0]) for i in ids],
                             "recall_all@4")
    assert [f.mean for f in core.figures] == [f.mean for f in shown.figures]
    assert panel.sides_model.rowCount() == 5 and "second look" in panel.sides_model.display(2, 0)
    assert panel.matrix_model.rowCount() == len(shown.questions)
    panel.changed_check.setChecked(True)
    assert panel.matrix_model.rowCount() == len(shown.changed)
    panel.changed_check.setChecked(False)
    # a cell: the question in the main view under that run's settings
    proxy = panel.matrix_table.model()
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=20_000):
        panel.matrix_table.activated.emit(proxy.index(0, 3))
    qid = panel.matrix_model.question(proxy.mapToSource(proxy.index(0, 3)).row())
    question = panel.questions[qid]
    assert window.query_edit.text() == question.text
    with History(path, create=False) as kept:
        assert window.ctx.current.config == kept.run(ids[1]).config("bm25_only")
    out_csv = panel.export("csv", tmp_path / "five.csv")
    assert out_csv is not None and out_csv.read_text() == shown.to_csv()


def test_impact_runs_on_the_store_s_question_set(qtbot, evaluation_window):
    from core.evaluation.judged import load_question_set

    window, evaluation = evaluation_window("judged")
    view = install_runs(window, evaluation).impact
    assert view.use_question_set()
    path = window.ctx.question_sets.path
    assert [(q.user_id, q.text) for q in view.queries] == [(q.user_id, q.text) for q in load_question_set(path)]
    assert view.file_label.text().startswith(f"{path.name}: {len(view.queries)} queries")
