"""The Evaluation view over a synthetic evaluate callable: progress, cancel, wins / losses, question click."""
from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import Qt

from core.evaluation.evaluate import evaluate
from core.config.presets import BUILTIN
from memsense_gui.views.evaluation import EvaluationView
from tests.gui.fixtures import eval_questions as questions, synthetic_evaluate, synthetic_recall as recall

PRESETS = {name: BUILTIN[name] for name in ("memsense", "bm25_only", "dense_only")}


@pytest.fixture(scope="module")
def results():
    return evaluate(recall, questions(), PRESETS)


@pytest.fixture
def view(qtbot):
    v = EvaluationView(evaluate=synthetic_evaluate, presets=lambda: PRESETS)
    qtbot.addWidget(v)
    v.resize(1200, 700)
    v.show()
    yield v
    v.shutdown()


def test_evaluate_fills_table_bars_and_wins_losses(qtbot, view):
    with qtbot.waitSignal(view.evaluation_finished, timeout=20_000) as blocker:
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    results = blocker.args[0]
    assert [r.preset for r in results] == list(PRESETS)
    assert view.metrics_model.rowCount() == 3
    view.metric_combo.setCurrentText("recall_all@4")
    assert view.bars.groups[0] == "all" and len(view.bars.groups) == 1 + 4
    assert view.bars.values["bm25_only"][0] == pytest.approx(results[1].overall["recall_all@4"])
    view.a_combo.setCurrentText("memsense")
    view.b_combo.setCurrentText("bm25_only")
    c = view.comparison
    assert c.wins + c.losses + c.ties == len(questions())
    assert view.diff_model.rowCount() == c.wins + c.losses
    assert f"B wins {c.wins}" in view.summary.text()
    assert not view.progress.isVisible()


def test_clicking_a_question_emits_it_with_gold_sessions(qtbot, view, results):
    view.set_results(results)
    view.metric_combo.setCurrentText("recall_any@4")
    view.a_combo.setCurrentText("memsense")
    view.b_combo.setCurrentText("dense_only")
    view.ties_check.setChecked(True)
    table = view.diff_table
    index = table.model().index(0, 1)
    row = view.diff_model.rows[table.model().mapToSource(index).row()]
    with qtbot.waitSignal(view.question_activated) as blocker:
        rect = table.visualRect(index)
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    user, query, gold = blocker.args
    assert (user, query) == (row["user"], row["question"])
    assert gold == tuple(f"{user}:S{s:03d}" for s in row["gold"])


def test_cancel_stops_a_running_evaluation(qtbot):
    started = threading.Event()

    def slow(presets, k, progress, cancel):
        started.set()
        for i in range(200):
            if cancel.is_set():
                raise RuntimeError("stopped")
            progress(i, 200, "recall")
            time.sleep(0.01)
        return []

    v = EvaluationView(evaluate=slow, presets=lambda: PRESETS)
    qtbot.addWidget(v)
    v.start()
    assert started.wait(5)
    qtbot.waitUntil(lambda: v.progress.maximum() == 200, timeout=5000)
    v.cancel()
    qtbot.waitUntil(lambda: "cancelled" in v.status.text(), timeout=5000)
    assert not v.cancel_button.isEnabled()
    v.shutdown()


def test_errors_are_shown_not_raised(qtbot):
    def broken(presets, k, progress, cancel):
        from core.errors import MemsenseError
        raise MemsenseError("no judged questions to evaluate")

    v = EvaluationView(evaluate=broken, presets=lambda: PRESETS)
    qtbot.addWidget(v)
    with qtbot.waitSignal(v.evaluation_failed, timeout=5000):
        v.start()
    assert "no judged questions" in v.status.text()
    v.shutdown()
