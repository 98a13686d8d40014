"""Impact on unjudged queries (SPEC §14): RBO against a plain reference, and the CLI against two
`memsense search --json` runs."""
from __future__ import annotations

import json
import random

import pytest

from core.errors import MemsenseError
from core.evaluation.impact import QueryImpact, rbo_ext, read_queries
from tests.fixtures import run_cli


def naive_rbo_ext(short: list[str], long_: list[str], p: float) -> float:
    """Eq. 32 of Webber et al. (2010) written out with sets at every depth."""
    if len(short) > len(long_):
        short, long_ = long_, short
    if not long_:
        return 1.0
    if not short:
        return 0.0
    x = {d: len(set(short[:d]) & set(long_[:d])) for d in range(1, len(long_) + 1)}
    sl, ll = len(short), len(long_)
    head = sum(x[d] / d * p ** d for d in range(1, ll + 1))
    tail = sum(x[sl] * (d - sl) / (sl * d) * p ** d for d in range(sl + 1, ll + 1))
    return (1 - p) / p * (head + tail) + ((x[ll] - x[sl]) / ll + x[sl] / sl) * p ** ll


def test_rbo_of_identical_and_disjoint_lists():
    assert rbo_ext(list("abcd"), list("abcd")) == pytest.approx(1.0)
    assert rbo_ext(list("abcd"), list("efgh")) == 0.0
    assert rbo_ext([], []) == 1.0 and rbo_ext([], ["a"]) == 0.0
    # a swap at the top costs more than a swap at the bottom (top-weighted)
    assert rbo_ext(list("abcd"), list("bacd")) < rbo_ext(list("abcd"), list("abdc")) < 1.0


def test_rbo_against_the_formula_on_random_lists():
    rng = random.Random(7)
    items = [f"m{i}" for i in range(12)]
    for _ in range(300):
        a = rng.sample(items, rng.randint(0, 8))
        b = rng.sample(items, rng.randint(0, 8))
        p = rng.choice([0.5, 0.9, 0.98])
        assert rbo_ext(a, b, p) == pytest.approx(naive_rbo_ext(a, b, p), abs=1e-12)
        assert rbo_ext(a, b, p) == pytest.approx(rbo_ext(b, a, p), abs=1e-12)


def test_query_impact_sets():
    q = QueryImpact("u", "q", ("a", "b", "c", "d"), ("b", "a", "e", "d"), 4)
    assert q.overlap == 0.75 and q.entered == ("e",) and q.left == ("c",)
    assert not q.same_set and not q.same_order
    assert q.moved == (("a", 1, 2), ("b", 2, 1))  # d keeps rank 4; c left, e entered: not moves
    far = QueryImpact("u", "q", ("a", "b", "c", "d"), ("d", "b", "c", "a"), 4)
    assert far.moved == (("a", 1, 4), ("d", 4, 1))
    assert far.to_json()["moved"][0] == {"memory_id": "a", "a": 1, "b": 4}


def test_query_file_formats(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text('# real queries\nalice\twhere did I park?\n\n{"user": "bob", "query": "my dentist"}\n', encoding="utf-8")
    assert [(q.user_id, q.text) for q in read_queries(str(path))] == [("alice", "where did I park?"), ("bob", "my dentist")]
    bare = tmp_path / "bare.txt"
    bare.write_text("one\ntwo\n", encoding="utf-8")
    with pytest.raises(MemsenseError, match="no user"):
        read_queries(str(bare))
    assert [q.user_id for q in read_queries(str(bare), default_user="carol")] == ["carol", "carol"]
    bad = tmp_path / "bad.txt"
    bad.write_text('{"user": 3, "query": "x"}\n', encoding="utf-8")
    with pytest.raises(MemsenseError, match=r"bad\.txt:1"):
        read_queries(str(bad))


QUERIES = [("demo-ana", "How many races has Ana run in 2024?"), ("demo-ana", "List all the trips Ana took."),
           ("demo-ana", "What is Ana's job?"), ("demo-ana", "bees")]


@pytest.mark.slow
def test_impact_cli_equals_two_search_runs(capsys, tmp_path, demo_store, model_cache):
    path = tmp_path / "queries.tsv"
    path.write_text("".join(f"{u}\t{q}\n" for u, q in QUERIES), encoding="utf-8")
    code, out, err = run_cli(capsys, "impact", path, "--store", demo_store, "--cache", model_cache,
                             "--a", "memsense", "--b", "bm25_only", "--json", "--quiet")
    assert code == 0, err
    report = json.loads(out)
    assert len(report["per_query"]) == len(QUERIES)
    k = report["totals"]["k"]
    for (user, query), row in zip(QUERIES, report["per_query"]):
        lists = []
        for preset in ("memsense", "bm25_only"):
            code, out, err = run_cli(capsys, "search", "--store", demo_store, "--cache", model_cache,
                                     "--user", user, "--preset", preset, "--json", query)
            assert code == 0, err
            lists.append([r["memory_id"] for r in json.loads(out)["results"]])
        a, b = lists
        assert row["a"] == a and row["b"] == b
        assert len(a) == len(b) == k
        assert row[f"overlap@{k}"] == pytest.approx(len(set(a) & set(b)) / k)
        assert row["rbo"] == pytest.approx(naive_rbo_ext(a, b, 0.9))
        assert row["entered"] == [m for m in b if m not in a] and row["left"] == [m for m in a if m not in b]
    totals = report["totals"]
    assert totals["mean_rbo"] == pytest.approx(sum(r["rbo"] for r in report["per_query"]) / len(QUERIES))
    assert totals["changed_order"] == sum(r["a"] != r["b"] for r in report["per_query"]) / len(QUERIES)


def test_a_question_set_gives_its_questions_as_the_queries(tmp_path):
    from core.evaluation.impact import read_queries
    from core.evaluation.judged import load_question_set
    from core.recall.engine import DEMO_QUESTIONS

    queries = read_queries(str(DEMO_QUESTIONS))
    assert [(q.user_id, q.text) for q in queries] == [(q.user_id, q.text) for q in load_question_set(DEMO_QUESTIONS)]
    one = tmp_path / "one.jsonl"
    one.write_text('{"user": "u", "query": "hello there"}\n', encoding="utf-8")
    assert [(q.user_id, q.text) for q in read_queries(str(one))] == [("u", "hello there")]  # still JSON Lines
