"""Grading results 0-3 from the keyboard in the real window: shown, saved at once, kept across
windows; TREC qrels out and in, runs out; the Evaluation view scores what was graded."""
from __future__ import annotations


from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.config import Config
from core.evaluation.judged import load_judged
from core.rank.rerank import rerank
from memsense_gui.models.pool import PoolModel
from memsense_gui.models.results import ResultsModel
from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from memsense_gui.state import paths
from memsense_gui.window.evaluation import install_evaluation
from tests.gui.fixtures import FakeEngine, error_boxes
from memsense_gui.views.dock import DockId


QUERY = "what did they say about travel"


def judged_path(app_home):
    return paths.judged_file(app_home, str(app_home / "stores" / "fake"))


def run(qtbot, w, query: str = QUERY, user: str = "synth-a") -> None:
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.queries.open_question(user, query, ())


def focus(qtbot, w, view) -> None:
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w, timeout=2000)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=2000)


def grade_cell(model, row: int, col: int, role=Qt.ItemDataRole.DisplayRole):
    return model.index(row, col).data(role)


def test_pressing_2_grades_the_selected_result_saves_it_and_survives_a_new_window(qtbot, make_window, app_home):
    w = make_window()
    run(qtbot, w)
    model = w.results.model
    w.results.select_position(1)
    chosen = model.memory_id(1)
    focus(qtbot, w, w.results.view)
    qtbot.keyClick(w.results.view, Qt.Key.Key_2)

    assert grade_cell(model, 1, ResultsModel.GRADE) == "2"
    assert grade_cell(model, 1, ResultsModel.GRADE, RAW_ROLE) == 2
    assert grade_cell(model, 0, ResultsModel.GRADE) == ""
    header = w.results.view.horizontalHeader()  # the grade given is a key column, beside the rank
    assert header.visualIndex(ResultsModel.GRADE) == 1 and not header.isSectionHidden(ResultsModel.GRADE)
    (question,) = load_judged(judged_path(app_home))  # saved at once
    assert (question.question_id, question.user_id, question.text) == ("synth-a:m1", "synth-a", QUERY)
    assert question.relevance == {chosen: 2}

    # the pool table grades too (a candidate outside the results), and shows the result's grade
    w.raise_dock(DockId.CANDIDATE_POOL)
    pool = w.pool_panel.model
    row = next(r for r in range(pool.rowCount()) if pool.memory_id(r) not in model.ranking.result_ids)
    candidate = pool.memory_id(row)
    w.pool_panel.view.selectRow(row)
    assert w.pool_panel.view.selectionModel().selectedRows()[0].data(ID_ROLE) == candidate
    focus(qtbot, w, w.pool_panel.view)
    qtbot.keyClick(w.pool_panel.view, Qt.Key.Key_0)
    assert grade_cell(pool, row, PoolModel.GRADE) == "0"
    assert grade_cell(pool, pool.row_of(chosen), PoolModel.GRADE) == "2"

    # typing a digit in the query box is typing, not grading
    focus(qtbot, w, w.query_edit)
    qtbot.keyClick(w.query_edit, Qt.Key.Key_3)
    assert w.query_edit.text().endswith("3")
    assert load_judged(judged_path(app_home))[0].relevance == {chosen: 2, candidate: 0}

    # a new query has no grades; the same query again (same id) shows them
    run(qtbot, w, "something else entirely")
    assert all(grade_cell(w.results.model, r, ResultsModel.GRADE) == "" for r in range(w.results.model.rowCount()))
    w.close()
    again = make_window()
    run(qtbot, again)
    assert again.results.model.index(again.results.model.row_of(chosen), ResultsModel.GRADE).data() == "2"
    again.results.select_position(0)
    focus(qtbot, again, again.results.view)
    qtbot.keyClick(again.results.view, Qt.Key.Key_3)
    (question,) = load_judged(judged_path(app_home))
    assert question.question_id == "synth-a:m1" and len(question.relevance) == 3


def test_menu_actions_and_shortcuts_list_the_grading_keys(qtbot, make_window):
    w = make_window()
    run(qtbot, w)
    texts = {a.text().replace("&", ""): a for a in w.actions()}
    action = next(a for t, a in texts.items() if t.startswith("Grade selected result 1"))
    assert action.shortcut().toString() == "1"
    w.results.select_position(2)
    action.trigger()
    assert grade_cell(w.results.model, 2, ResultsModel.GRADE) == "1"
    dialog = w.show_shortcuts()
    rows = {dialog.table.item(r, 0).text(): dialog.table.item(r, 1).text() for r in range(dialog.table.rowCount())}
    assert "0 / 1 / 2 / 3" in rows and "Grade" in rows["0 / 1 / 2 / 3"]
    dialog.close()


def test_grading_with_nothing_selected_only_says_what_to_do(qtbot, make_window):
    w = make_window()
    with qtbot.assertNotEmitted(w.ctx.error_reported):
        assert not w.judging.grade_selected(2)
    assert "select a result" in w.statusBar().currentMessage()


def test_qrels_export_then_import_round_trips(qtbot, make_window, tmp_path):
    w = make_window()
    run(qtbot, w)
    ids = w.ctx.session.ranking.result_ids
    for position, grade in ((0, 3), (1, 0), (2, 2)):
        w.results.select_position(position)
        assert w.judging.grade_selected(grade)
    run(qtbot, w, "which pets", "synth-b")
    w.results.select_position(0)
    assert w.judging.grade_selected(1)
    pets_top = w.ctx.session.ranking.result_ids[0]

    memory, session = tmp_path / "memory.qrels", tmp_path / "session.qrels"
    assert w.judging.export_qrels(memory) and w.judging.export_qrels(session, "session")
    lines = memory.read_text().splitlines()
    assert sorted(lines) == sorted([f"synth-a:m1 0 {ids[0]} 3", f"synth-a:m1 0 {ids[1]} 0",
                                    f"synth-a:m1 0 {ids[2]} 2", f"synth-b:m1 0 {pets_top} 1"])
    assert all(line.split()[2].count(":") == 1 for line in session.read_text().splitlines())  # "<user>:S003"

    # change the grades, then import the exported qrels: back to what was exported
    run(qtbot, w)
    w.results.select_position(0)
    assert w.judging.grade_selected(1)
    w.results.select_position(3)
    assert w.judging.grade_selected(3)
    assert w.judging.import_qrels(memory)
    assert w.results.model.index(0, ResultsModel.GRADE).data() == "3"
    assert w.results.model.index(3, ResultsModel.GRADE).data() == ""
    again = tmp_path / "again.qrels"
    assert w.judging.export_qrels(again)
    assert again.read_text() == memory.read_text()


def test_a_bad_qrels_file_is_a_clear_error_and_changes_nothing(qtbot, make_window, app_home, tmp_path):
    w = make_window()
    run(qtbot, w)
    w.results.select_position(0)
    assert w.judging.grade_selected(2)
    before = judged_path(app_home).read_text()
    cases = {"three columns": ("synth-a:m1 0 synth-a:S001:T000\n", "expected 4 columns"),
             "unknown question": ("conv-9:q0 0 synth-a:S001:T000 1\n", "unknown question id"),
             "bad grade": ("synth-a:m1 0 synth-a:S001:T000 7\n", "outside 0-3"),
             "not a document": ("synth-a:m1 0 hello 1\n", "is not a session id")}
    for name, (text, message) in cases.items():
        bad = tmp_path / f"{name}.qrels"
        bad.write_text(text)
        with qtbot.waitSignal(w.ctx.error_reported, timeout=2000) as blocker:
            assert not w.judging.import_qrels(bad)
        assert message in blocker.args[0] and "line 1" in blocker.args[0], name
        assert error_boxes(w)
    assert judged_path(app_home).read_text() == before
    assert w.results.model.index(0, ResultsModel.GRADE).data() == "2"
    w.results.select_position(1)
    assert w.judging.grade_selected(1)  # still working


def test_exporting_with_nothing_judged_says_what_to_do(qtbot, make_window, tmp_path):
    w = make_window()
    with qtbot.waitSignal(w.ctx.error_reported, timeout=2000) as blocker:
        assert not w.judging.export_qrels(tmp_path / "x.qrels")
    assert "press 0-3" in blocker.args[0]
    with qtbot.waitSignal(w.ctx.error_reported, timeout=2000):
        assert w.judging.export_run(tmp_path / "x.run") is None
    assert not (tmp_path / "x.qrels").exists() and not (tmp_path / "x.run").exists()


def test_a_corrupt_judged_file_is_reported_and_kept(qtbot, make_window, app_home):
    path = judged_path(app_home)
    path.parent.mkdir(parents=True)
    path.write_text('{"format": "memsense-judged-questions", "version": 1, "questions": [{"id": 1}]}')
    w = make_window(open_store=False)
    with qtbot.waitSignal(w.ctx.error_reported, timeout=5000) as blocker:
        w.stores.open_store(str(app_home / "stores" / "fake"))
    assert "'id' must be non-empty text" in blocker.args[0]
    qtbot.waitUntil(lambda: w.ctx.model_ready, timeout=5000)
    run(qtbot, w)
    w.results.select_position(0)
    assert w.judging.grade_selected(2)
    assert "[{\"id\": 1}]" in path.read_text()  # untouched
    assert load_judged(path.with_name("fake.recovered.json"))[0].relevance


def test_run_export_covers_every_judged_question(qtbot, make_window, tmp_path):
    w = make_window()
    for user, query in (("synth-a", QUERY), ("synth-b", "which pets")):
        run(qtbot, w, query, user)
        w.results.select_position(0)
        assert w.judging.grade_selected(2)
    out = tmp_path / "memsense.run"
    with qtbot.waitSignal(w.ctx.run_exported, timeout=10_000):
        assert w.judging.export_run(out) is not None
    lines = [line.split() for line in out.read_text().splitlines()]
    expected = rerank(FakeEngine("x").pool("synth-b", "which pets"), Config()).result_ids
    assert [c[2] for c in lines if c[0] == "synth-b:m1"] == expected
    assert {c[0] for c in lines} == {"synth-a:m1", "synth-b:m1"}
    assert all(c[1] == "Q0" and c[5] == "memsense" for c in lines)
    assert [int(c[3]) for c in lines if c[0] == "synth-a:m1"] == list(range(1, len(expected) + 1))


def test_the_evaluation_view_scores_the_questions_judged_in_the_app(qtbot, make_window):
    w = make_window()
    view = install_evaluation(w)
    view.source.use_app_judged()
    assert "judged in the app" in view.source_label.text()
    with qtbot.waitSignal(view.evaluation_failed, timeout=10_000) as blocker:
        view.start()
    assert "press 0-3" in str(blocker.args[0])

    run(qtbot, w)
    ids = w.ctx.session.ranking.result_ids
    w.results.select_position(3)
    assert w.judging.grade_selected(3)
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000) as blocker:
        view.start()
    results = blocker.args[0]
    assert {r.questions for r in results} == {1}
    memsense = next(r for r in results if r.preset == "memsense")
    graded_session = int(ids[3].split(":")[1][1:])
    assert memsense.outcomes[0].gold_sessions == (graded_session,)
    recalls = len(w.engines[-1].recalls)
    w.results.select_position(0)
    assert w.judging.grade_selected(1)  # more grading: re-rank only, no new recall
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    assert len(w.engines[-1].recalls) == recalls
    view.shutdown()
