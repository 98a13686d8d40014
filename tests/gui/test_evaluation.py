"""The Evaluation view: models under qtmodeltester, the view over a synthetic evaluate
callable (progress, cancel, wins / losses, question click), and the view in the real window."""
from __future__ import annotations

import json
import threading
import time
import zlib

import pytest
from PySide6.QtCore import Qt

from core.evaluate import evaluate
from core.presets import BUILTIN
from core.synthetic import synthetic_pool
from core.types import Question
from memsense_gui.evaluation import EvaluationView, PresetMetricsModel, QuestionDiffModel, diff_rows, install

PRESETS = {name: BUILTIN[name] for name in ("memsense", "bm25_only", "dense_only")}


def recall(user, query, depth=0):
    return synthetic_pool(n_sessions=10, seed=zlib.crc32(f"{user}|{query}".encode()), user_id=user, query=query)


def questions(users=("synth-a", "synth-b"), n=8):
    return [Question(f"{u}:q{i}", u, f"question {i} about topic {i}", "", 1 + i % 4,
                     (1 + i % 10,) if i % 2 else (1 + i % 10, 1 + (i + 3) % 10)) for u in users for i in range(n)]


def synthetic_evaluate(presets, k, progress, cancel):
    return evaluate(recall, questions(), presets, k, progress, cancel)


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


# -- models ---------------------------------------------------------------------------------------------
def test_metrics_model_passes_modeltester(qtmodeltester, results):
    model = PresetMetricsModel()
    model.set_results(results)
    qtmodeltester.check(model)
    assert model.rowCount() == 3 and model.columnCount() == 7
    assert model.headerData(4, Qt.Orientation.Horizontal) == "recall@4"
    raw = model.index(1, 3).data(Qt.ItemDataRole.UserRole + 1)
    assert raw == results[1].overall["recall_all@4"]
    assert model.index(1, 3).data() == f"{raw:.3f}"


def test_diff_model_passes_modeltester(qtmodeltester, results):
    rows = diff_rows(results[0], results[1], "recall_any@4")
    model = QuestionDiffModel()
    model.set_rows(rows)
    qtmodeltester.check(model)
    assert model.rowCount() == sum(1 for a, b in zip(results[0].outcomes, results[1].outcomes)
                                   if a.metrics["recall_any@4"] != b.metrics["recall_any@4"])
    diffs = [r["diff"] for r in rows]
    assert diffs == sorted(diffs, reverse=True)
    assert len(diff_rows(results[0], results[1], "recall_any@4", include_ties=True)) == len(questions())


# -- the view -------------------------------------------------------------------------------------------
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


# -- through the real window ----------------------------------------------------------------------------
def test_evaluation_view_in_the_window_opens_a_question_in_the_inspector(qtbot, make_window, tmp_path):
    window = make_window()
    view = install(window)
    items = [{"user": q.user_id, "question": q.text, "answer": "", "category": q.category,
              "evidence": [f"D{s}:1" for s in q.gold_sessions]} for q in questions(n=5)]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    view.source.set_path(path)
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000) as blocker:
        view.start()
    assert len(blocker.args[0]) == len(window.presets.all())
    recalls = len(window.engines[-1].recalls)
    assert recalls >= 10  # every question recalled once, on the engine
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000):
        view.start()
    assert len(window.engines[-1].recalls) == recalls  # pools are cached: re-rank only
    view.ties_check.setChecked(True)
    table = view.diff_table
    index = table.model().index(0, 1)
    row = view.diff_model.rows[table.model().mapToSource(index).row()]
    with qtbot.waitSignal(window.ranking_updated, timeout=10_000):
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center())
    assert window.query_edit.text() == row["question"]
    assert window.user_combo.currentText() == row["user"]
    assert window.session.gold == frozenset(f"{row['user']}:S{s:03d}" for s in row["gold"])
