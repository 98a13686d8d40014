"""Metrics (SPEC §8) against hand-computed cases and against trec_eval via ir_measures;
the paired comparison and its significance tests."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import MemsenseError
from core.evaluation.metrics import (compare, metric_names, mrr, ndcg, parse_metric, question_metrics, recall, recall_all,
                          recall_any, sign_flip_p)


# -- hand-computed ---------------------------------------------------------------------------------------
def test_hand_computed_two_gold_sessions():
    ranked = [7, 3, 9, 12]  # sessions of the four results
    gold = {3: 1, 12: 1}
    assert recall_any(ranked, gold, 4) == 1.0
    assert recall_all(ranked, gold, 4) == 1.0
    assert recall_all(ranked, gold, 3) == 0.0  # session 12 is 4th
    assert recall(ranked, gold, 3) == 0.5
    assert mrr(ranked, gold) == 0.5  # first gold at position 2
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert ndcg(ranked, gold, 4) == pytest.approx(dcg / idcg)


def test_hand_computed_miss_and_repeats():
    assert question_metrics([1, 2, 3, 4], {5: 1}, 4) == {"recall_any@4": 0.0, "recall_all@4": 0.0, "recall@4": 0.0,
                                                          "mrr": 0.0, "ndcg@4": 0.0}
    # Two chunks of session 3: the repeat at position 2 gains nothing, positions are results'.
    ranked = [3, 3, 8]
    assert ndcg(ranked, {3: 1, 8: 1}, 3) == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    assert recall(ranked, {3: 1, 8: 1}, 2) == 0.5


def test_graded_ndcg_uses_the_grade_as_gain():
    ranked = ["a", "b", "c"]
    qrels = {"a": 1, "b": 3, "z": 2}
    dcg = 1 / math.log2(2) + 3 / math.log2(3)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg(ranked, qrels, 3) == pytest.approx(dcg / idcg)
    assert recall_all(ranked, {"a": 1, "z": 0}, 3) == 1.0  # grade 0 is not relevant


def test_metric_names_and_parsing():
    assert metric_names(4) == ("recall_any@4", "recall_all@4", "recall@4", "mrr", "ndcg@4")
    assert parse_metric("recall_all@10") == ("recall_all", 10)
    assert parse_metric("mrr") == ("mrr", 4)
    assert parse_metric("ndcg@50") == ("ndcg", 50)
    for bad in ("recall_some@4", "mrr@3", "ndcg@0", "", "recall_all@51", "recall_all@99999999999999999999999"):
        with pytest.raises(MemsenseError, match="metric"):
            parse_metric(bad)


# -- against trec_eval (ir_measures) ---------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_agrees_with_ir_measures(data):
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, Qrel, R, ScoredDoc, Success, nDCG

    docs = [f"s{i}" for i in range(12)]
    ranked = data.draw(st.lists(st.sampled_from(docs), min_size=0, max_size=8, unique=True))
    judged = data.draw(st.dictionaries(st.sampled_from(docs), st.integers(0, 3), min_size=1, max_size=6))
    if not any(g >= 1 for g in judged.values()):
        judged[docs[0]] = 1
    k = data.draw(st.integers(1, 6))
    qrels = [Qrel("q", d, g) for d, g in judged.items()]
    run = [ScoredDoc("q", d, float(len(ranked) - i)) for i, d in enumerate(ranked)] or [ScoredDoc("q", "none", 0.0)]
    ref = ir_measures.calc_aggregate([nDCG @ k, RR, R @ k, Success @ k], qrels, run)
    assert ndcg(ranked, judged, k) == pytest.approx(ref[nDCG @ k], abs=1e-9)
    assert mrr(ranked, judged) == pytest.approx(ref[RR], abs=1e-9)
    assert recall(ranked, judged, k) == pytest.approx(ref[R @ k], abs=1e-9)
    assert recall_any(ranked, judged, k) == pytest.approx(ref[Success @ k], abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 20), max_size=10), st.sets(st.integers(1, 20), min_size=1, max_size=5),
       st.integers(1, 10))
def test_invariants(ranked, gold, k):
    qrels = {g: 1 for g in gold}
    m = question_metrics(ranked, qrels, k)
    assert 0 <= m[f"recall_all@{k}"] <= m[f"recall@{k}"] <= m[f"recall_any@{k}"] <= 1
    assert 0 <= m[f"ndcg@{k}"] <= 1 + 1e-12
    assert (m[f"recall_any@{k}"] == 0) == (m[f"ndcg@{k}"] == 0)
    assert m["mrr"] >= (1 / k if m[f"recall_any@{k}"] else 0)


# -- paired comparison ----------------------------------------------------------------------------------
def test_compare_counts_wins_and_losses():
    a = {"q1": 1.0, "q2": 0.0, "q3": 0.5, "q4": 1.0}
    b = {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 1.0}
    c = compare(a, b, "recall@4")
    assert (c.wins, c.losses, c.ties) == (1, 1, 2)
    assert c.delta == pytest.approx((3.0 - 2.5) / 4)
    assert [d.diff for d in c.diffs] == [0.0, 1.0, -0.5, 0.0]
    # two non-zero differences, 1 and -0.5: of the 4 sign patterns, means ±0.25, ±0.75 (|.|≥0.25 all)
    assert c.p_value == 1.0


def test_sign_flip_exact_p_value():
    # five differences all +1: only the all-plus and all-minus patterns are as extreme -> 2 / 32
    assert sign_flip_p(np.ones(5)) == pytest.approx(2 / 32)
    assert sign_flip_p(np.zeros(4)) == 1.0


def test_sign_flip_matches_scipy_permutation_test():
    from scipy import stats

    d = np.array([0.5, 1, -0.25, 1, 1, 0.5, 0.3, -1, 1, 0.2])
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", vectorized=True).pvalue
    assert sign_flip_p(d) == pytest.approx(ref)


def test_sampled_p_value_is_seeded_and_detects_a_clear_difference():
    rng = np.random.default_rng(1)
    a = {str(i): float(rng.random() < 0.4) for i in range(300)}
    b = {q: 1.0 if v or i % 3 == 0 else 0.0 for i, (q, v) in enumerate(a.items())}
    first, again = compare(a, b), compare(a, b)
    assert first.p_value == again.p_value < 0.01
    assert compare(a, b, test="wilcoxon").p_value < 0.01
    assert compare(a, a).p_value == 1.0


def test_compare_rejects_different_question_sets_and_unknown_tests():
    with pytest.raises(MemsenseError, match="different questions"):
        compare({"q1": 1.0}, {"q2": 1.0})
    with pytest.raises(MemsenseError, match="unknown test"):
        compare({"q1": 1.0}, {"q1": 0.0}, test="t-test")
