"""The rating loop (issue 36): each question's pass or fail in the last kept run of its question
file, in the question picker; a case's metric run by run in its details."""
from __future__ import annotations

import json

from core.config import Config
from core.evaluation.run_keeping import keep_run
from memsense_gui.views.cases import sparkline
from memsense_gui.views.dock import DockId
from memsense_gui.window.question_picker import QUESTION_ROLE
from tests.gui.fixtures import eval_questions

METRIC = f"recall_all@{Config().top_k}"


def _questions_file(tmp_path, name="questions.json", n=3):
    items = [{"user": q.user_id, "question": q.text, "answer": f"answer {i}", "category": q.category,
              "evidence": [f"D{s}:1" for s in q.gold_sessions]} for i, q in enumerate(eval_questions(n=n))]
    path = tmp_path / name
    path.write_text(json.dumps({"questions": items}))
    return path


def test_the_picker_shows_each_questions_last_run_and_a_case_its_runs(qtbot, make_window, tmp_path):
    w = make_window()
    path = _questions_file(tmp_path)
    w.cases.source.set_path(path)
    picker = w.picker
    qtbot.waitUntil(lambda: len(picker.questions) == 6, timeout=10_000)
    ids = [q.question_id for q in picker.questions]
    texts = [picker.list.item(r).text() for r in range(picker.list.count())]
    assert all(t.startswith("–") for t in texts)  # no run kept yet
    assert "no kept run of this question file" in picker.list.item(0).toolTip()

    location = w.ctx.location
    cfg = {"memsense": Config()}
    keep_run(location, "eval", path, cfg, {"memsense": {ids[0]: {METRIC: 0.0}, ids[1]: {METRIC: 1.0}}}, {}, model="m")
    other = _questions_file(tmp_path, "other.json", n=2)  # another file (other bytes): its runs do not count
    keep_run(location, "eval", other, cfg, {"memsense": {ids[0]: {METRIC: 0.0}}}, {}, model="m")
    newest = keep_run(location, "eval", path, cfg, {"memsense": {ids[0]: {METRIC: 1.0}}}, {}, model="m")
    with qtbot.waitSignal(picker.runs.changed, timeout=10_000):
        w.ctx.runs.recorded.emit(newest)  # as when the app keeps a run: the history is read again
    assert [r.id for r in picker.runs.runs] == [1, 3]

    picker.show_list()
    row = {picker.list.item(r).data(QUESTION_ROLE).question_id: r for r in range(picker.list.count())}
    first, second = picker.list.item(row[ids[0]]), picker.list.item(row[ids[1]])
    assert first.text().startswith("pass 1.00") and "last run: run 3: memsense" in first.toolTip()
    assert second.text().startswith("pass 1.00") and "run 1" in second.toolTip()
    assert picker.list.item(row[ids[2]]).text().startswith("–")
    assert first.foreground().color() != picker.list.item(row[ids[2]]).foreground().color()
    picker.list.hide()

    # the case's details: its metric in each run of the file, oldest first, as a sparkline and a table
    w.raise_dock(DockId.CASES)
    panel = w.cases_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 6, timeout=30_000)
    panel.select_row(next(r for r in range(6) if panel.model.question(r).question_id == ids[0]))
    text = panel.details.toPlainText()
    assert f"{METRIC} across 2 kept runs" in text and "▁█" in text
    assert "run 3: memsense" in text and "run 1: memsense" in text and "run 2" not in text
    panel.select_row(next(r for r in range(6) if panel.model.question(r).question_id == ids[2]))
    assert "No kept run of this question file scored it" in panel.details.toPlainText()

    picker.show_list()
    shown = keep_run(location, "eval", path, cfg, {"memsense": {ids[2]: {METRIC: 1.0}}}, {}, model="m")
    with qtbot.waitSignal(picker.runs.changed, timeout=10_000):
        w.ctx.runs.recorded.emit(shown)  # a run kept while the list is open: it follows at once
    assert picker.list.item(row[ids[2]]).text().startswith("pass 1.00")
    picker.list.hide()


def test_a_sparkline_block_is_as_high_as_its_value():
    assert sparkline([0.0, 0.5, 1.0, 2.0, -1.0]) == "▁▅██▁"


def test_a_run_of_several_configs_counts_once():
    from core.evaluation.question_runs import RunValue
    from memsense_gui.views.cases import runs_html

    values = [RunValue(4, 0.0, "eval", c, METRIC, v) for c, v in (("memsense", 1.0), ("bm25_only", 0.0))]
    text = runs_html(values, METRIC)
    assert f"{METRIC} across 1 kept run, 2 configs" in text and "run 4: bm25_only" in text
    assert "█▁" in text  # memsense (1) then bm25_only (0), as kept
