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


def test_questions_and_gold_sessions_are_counted_apart_and_each_question_listed_once():
    from core.evaluation.diagnose import Diagnosis, LostSession, by_question

    def item(q, session, stage, rank):
        return LostSession(q, "u", 1, f"text of {q}", session, f"u:S{session}", stage, rank, "")

    items = (item("q1", 1, "outranked", 6), item("q1", 2, "absent", None), item("q1", 3, "selected", 2),
             item("q2", 4, "selected", 1), item("q3", 5, "outranked", 9), item("q3", 6, "cut_from_pool", None))
    d = Diagnosis(4, 3, items)
    assert d.failing_questions == 2 and d.lost_sessions == 4 and len(d.items) == 6
    assert d.caption() == ("3 questions (2 fail: a gold session not in the top 4), 6 gold sessions "
                           "(4 lost, 2 returned)")
    lost = [i for i in items if i.stage not in ("selected", "fallback_fill")]
    groups = by_question(lost, items)
    assert [g.first.question_id for g in groups] == ["q1", "q3"]
    q1, q3 = groups
    assert (q1.lost, len(q1.gold), q1.stages, q1.returned_ranks) == (2, 3, "absent, outranked", (2,))
    assert (q3.lost, len(q3.gold), q3.stages, q3.returned_ranks) == (2, 2, "cut_from_pool, outranked", ())
    outranked = by_question([i for i in items if i.stage == "outranked"], items)
    assert [(g.first.question_id, g.lost) for g in outranked] == [("q1", 2), ("q3", 2)]
    data = d.to_json()
    assert (data["questions"], data["failing_questions"], data["gold_sessions"], data["lost_sessions"]) == (3, 2, 6, 4)


def test_diagnose_opens_the_store_once_and_re_ranks_each_question_once(capsys, demo_store, model_cache,
                                                                       monkeypatch):
    """The chunks of every user come with the pools, and the run's metrics from the diagnose's own re-ranks."""
    import core.evaluation.diagnose as diagnose_module
    import core.evaluation.evaluate as evaluate_module
    import core.recall.engine as engine_module
    from core.evaluation.judged import load_question_set
    from core.evaluation.evaluate import judged_only

    opened, reranks = [], []
    real_engine, real_rerank = engine_module.Engine, diagnose_module.rerank

    class Counted(real_engine):  # type: ignore[misc, valid-type]
        def __init__(self, *a, **k):
            opened.append(a[0] if a else k.get("location"))
            super().__init__(*a, **k)

    def counted(pool, cfg, *a, **k):
        reranks.append(pool.query)
        return real_rerank(pool, cfg, *a, **k)

    monkeypatch.setattr(engine_module, "Engine", Counted)
    monkeypatch.setattr(diagnose_module, "rerank", counted)
    monkeypatch.setattr(evaluate_module, "rerank", counted)
    code, out, err = run_cli(capsys, "diagnose", DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache,
                             "--json", "--quiet")
    assert code == 0, err
    questions = judged_only(load_question_set(DEMO_QUESTIONS))
    assert len(opened) == 1
    assert len(reranks) == len(questions) == json.loads(out)["questions"]  # once per question, one config
