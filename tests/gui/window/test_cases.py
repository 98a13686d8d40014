"""The case list in the real window: pass/fail under the current settings, filters, open a case."""
from __future__ import annotations

import pytest

from core.errors import MemsenseError

import json
from dataclasses import replace

from core.evaluation.evaluate import evaluate_config
from tests.gui.fixtures import eval_questions
from memsense_gui.views.dock import DockId


def _questions_file(tmp_path):
    items = [{"user": q.user_id, "question": q.text, "answer": f"answer {n}", "category": q.category,
              "evidence": [f"D{s}:1" for s in q.gold_sessions]} for n, q in enumerate(eval_questions(n=5))]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    return path


def test_cases_pass_or_fail_under_the_current_settings(qtbot, make_window, tmp_path):
    w = make_window()
    w.cases.source.set_path(_questions_file(tmp_path))
    panel = w.cases_panel
    w.raise_dock(DockId.CASES)  # shown: the cases load
    qtbot.waitUntil(lambda: panel.model.rowCount() == 10 and panel.model.counts()[1] == 10, timeout=30_000)
    cfg = w.ctx.current.config
    expected = evaluate_config(w.cases.pools, w.cases.questions, cfg, cfg.top_k)
    for row in range(panel.model.rowCount()):
        o = next(o for o in expected.outcomes if o.question_id == panel.model.question(row).question_id)
        assert panel.model.passed(row) == (o.metrics[f"recall_all@{cfg.top_k}"] == 1.0)
    passing = panel.model.counts()[0]
    assert f"{passing} of 10 pass" in panel.count.text()

    # a settings change re-scores every case (more results: never fewer passing)
    w.ctx.current.apply(replace(cfg, top_k=10), "test settings")
    qtbot.waitUntil(lambda: panel.model.metric == "recall_all@10", timeout=10_000)
    assert panel.model.counts()[0] >= passing

    # filters: a category, words, failing only
    panel.category.setCurrentIndex(1)
    cat = panel.category.currentData()
    assert panel.filter.rowCount() == sum(q.category == cat for q in panel.model.questions)
    panel.category.setCurrentIndex(0)
    panel.search.setText("question 3")
    assert panel.filter.rowCount() == 2
    panel.search.clear()
    panel.failing.setChecked(True)
    assert panel.filter.rowCount() == 10 - panel.model.counts()[0]
    panel.failing.setChecked(False)

    # the selected case shows its expected answer; opening it runs it with its gold marked
    panel.view.selectRow(0)
    q = panel.model.question(panel.selected_row())
    assert q.answer in panel.details.toPlainText() and "session" in panel.details.toPlainText()
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        panel.open_selected()
    assert w.query_edit.text() == q.text and w.user_combo.currentText() == q.user_id
    assert w.ctx.session.gold == frozenset(f"{q.user_id}:S{s:03d}" for s in q.gold_sessions)


def test_questions_about_other_users_say_so_in_the_panel(qtbot, make_window, tmp_path):
    w = make_window()
    path = tmp_path / "others.json"
    path.write_text(json.dumps({"questions": [{"user": "nobody", "question": "q?", "answer": "", "category": 1,
                                               "evidence": ["D1:1"]}]}))
    before = w.cases.source.path
    with pytest.raises(MemsenseError, match="about users this store does not hold") as err:
        w.cases.source.set_path(path)  # refused in one line (the app shows it in a dialog); nothing changes
    assert "nobody" in str(err.value) and w.cases.source.path == before
