"""Find a fix: every candidate's fixed and broken lists are what `memsense compare` says."""
from __future__ import annotations

import json

import pytest

from core.recall.engine import DEMO_QUESTIONS
from tests.fixtures import run_cli


def failing_cases(capsys, store, cache) -> list[str]:
    code, out, err = run_cli(capsys, "diagnose", DEMO_QUESTIONS, "--store", store, "--cache", cache, "--json", "--quiet")
    assert code == 0, err
    lost = [i["question_id"] for i in json.loads(out)["items"] if i["stage"] not in ("selected", "fallback_fill")]
    return list(dict.fromkeys(lost))


@pytest.mark.slow
def test_fix_candidates_agree_with_compare(capsys, tmp_path, demo_store, model_cache):
    cases = failing_cases(capsys, demo_store, model_cache)[:3]
    assert cases
    code, out, err = run_cli(capsys, "fix", DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache,
                             "--cases", ",".join(cases), "--trials", "60", "--json", "--quiet")
    assert code == 0, err
    report = json.loads(out)
    assert report["trials"] == 60 and report["cases"] == cases
    assert report["candidates"], "no config won any demo case back"
    assert max(len(c["cases_fixed"]) for c in report["candidates"]) >= 1
    for n, cand in enumerate(report["candidates"]):
        assert set(cand["cases_fixed"]) <= set(cases) and set(cand["cases_fixed"]) <= set(cand["fixed"])
        assert cand["changed"]
        path = tmp_path / f"candidate-{n}.json"
        path.write_text(json.dumps(cand["config"]), encoding="utf-8")
        code, out, err = run_cli(capsys, "compare", DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache,
                                 "--a", "memsense", "--b", path, "--all", "--json", "--quiet")
        assert code == 0, err
        cmp = json.loads(out)
        diffs = {r["question_id"]: r["diff"] for r in cmp["differences"]}
        assert sorted(cand["fixed"]) == sorted(q for q, d in diffs.items() if d > 0)
        assert sorted(cand["broken"]) == sorted(q for q, d in diffs.items() if d < 0)
        metric = cmp["metrics"][cmp["metric"]]
        assert cand["metric_before"] == pytest.approx(metric["mean_a"])
        assert cand["metric_after"] == pytest.approx(metric["mean_b"])


def test_fix_refuses_unknown_cases_and_bad_trials(capsys, demo_store, model_cache):
    code, _, err = run_cli(capsys, "fix", DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache,
                           "--cases", "nope:q1", "--quiet")
    assert code == 1 and "no judged question nope:q1" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "fix", DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache,
                           "--cases", "x", "--trials", "0", "--quiet")
    assert code == 2 and "--trials must be at least 1" in err
