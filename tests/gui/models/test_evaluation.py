"""The Evaluation view's tables under qtmodeltester."""
from __future__ import annotations


import pytest
from PySide6.QtCore import Qt

from core.evaluation.evaluate import evaluate
from core.config.presets import BUILTIN
from memsense_gui.models.evaluation import PresetMetricsModel, QuestionDiffModel, diff_rows
from tests.gui.fixtures import eval_questions as questions, synthetic_recall as recall

PRESETS = {name: BUILTIN[name] for name in ("memsense", "bm25_only", "dense_only")}


@pytest.fixture(scope="module")
def results():
    return evaluate(recall, questions(), PRESETS)


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
