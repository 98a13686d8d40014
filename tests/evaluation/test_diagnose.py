"""Failure attribution (SPEC §13): stage totals add up, and every item's chunk has that status
under `memsense explain` with the same config."""
from __future__ import annotations

import json

import pytest

from core.evaluation.diagnose import STAGES
from core.recall.engine import DEMO_QUESTIONS
from tests.fixtures import run_cli


@pytest.mark.slow
@pytest.mark.parametrize("preset,k", [("memsense", None), ("bm25_only", "2")])
def test_diagnose_agrees_with_explain(capsys, demo_store, model_cache, preset, k):
    extra = ["--k", k] if k else []
    code, out, err = run_cli(capsys, "diagnose", DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache,
                             "--preset", preset, "--json", "--quiet", *extra)
    assert code == 0, err
    report = json.loads(out)
    items = report["items"]
    assert report["gold_sessions"] == len(items) == sum(report["stages"].values())
    assert list(report["stages"]) == list(STAGES)
    for cat, counts in report["per_category"].items():
        assert sum(counts.values()) == sum(1 for i in items if str(i["category"]) == cat)
    assert report["stages"]["selected"] + report["stages"]["fallback_fill"] < len(items)  # the demo loses some
    top_k = ["--top-k", k] if k else []
    for item in items:
        assert item["memory_id"] is not None
        code, out, err = run_cli(capsys, "explain", "--store", demo_store, "--cache", model_cache, "--user",
                                 item["user_id"], "--preset", preset, "--memory", item["memory_id"], "--json",
                                 *top_k, item["query"])
        assert code == 0, err
        assert json.loads(out)["status"] == item["stage"], item


def test_every_stage_has_its_meaning():
    from core.evaluation.diagnose import STAGE_MEANING, STAGES

    assert set(STAGE_MEANING) == set(STAGES)


def test_every_stage_has_its_colour():
    from core.evaluation.diagnose import STAGES
    from core.evaluation.report import STAGE_COLOURS

    assert set(STAGE_COLOURS) == set(STAGES)
