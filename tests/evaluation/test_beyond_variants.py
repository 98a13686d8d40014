"""The measured-but-not-kept ideas of issue 22 item 3 (tools/beyond_variants.py) on hand-made sessions."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Sequence

import numpy as np

from tools import beyond_variants as bv


def ctx(text: str, final: list[float], means: Sequence[Sequence[float]], terms: list[set[str]]) -> bv.Ctx:
    codes = list(range(len(final)))
    unit = np.array(means, dtype=np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    index = SimpleNamespace(members=np.arange(len(codes)), starts=np.arange(len(codes)))
    user = bv.UserData(index, unit.astype(np.float32), {c: c for c in codes}, terms, unit)  # type: ignore[arg-type]
    return bv.Ctx(text, codes, dict(zip(codes, final)), lambda c, r: 0, user, unit[0])


def test_cluster_takes_the_best_session_of_each_cluster_in_final_order():
    a, b, c, d = [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]
    q = ctx("q", [0.6, 0.5, 0.4, 0.3, 0.2, 0.1], [a, a, a, b, c, d], [set()] * 6)
    assert bv.cluster(q, n=6) == [0, 3, 4, 5, 1, 2]
    assert bv.cluster(q, n=4) == q.codes  # no more sessions than results: final order


def test_coverage_prefers_a_session_that_adds_uncovered_query_terms():
    q = ctx("books and paintings", [0.5, 0.45, 0.40], [[1, 0]] * 3, [{"book"}, {"book"}, {"paint"}])
    assert bv.coverage(q, beta=0.2)[:3] == [0, 2, 1]  # 0.40 + 0.2 · 1/2 beats 0.45 + 0
    assert bv.coverage(q, beta=0.0)[:3] == [0, 1, 2]


def test_away_dense_swaps_the_session_dense_rrf_term_for_the_rank_away_from_the_picks():
    # session 1 is near the pick (0) and first on session_dense; away from 0 session 2 is first there
    q = ctx("q", [0.5, 0.3, 0.29], [[1, 0], [0.9, 0.1], [0.5, 0.5]], [set()] * 3)
    q.qvec = np.array([1.0, 0.2]) / np.hypot(1.0, 0.2)
    q.route_rank = lambda c, r: {0: 2, 1: 1, 2: 3}[c]  # the query's own session_dense ranks
    assert bv.away_dense(q, gamma=0.0)[:3] == [0, 1, 2]  # no feedback: final order
    assert bv.away_dense(q, gamma=1.0)[:3] == [0, 2, 1]


def test_sub_queries_split_triggered_questions_and_keep_their_names():
    assert bv.sub_queries("How many times did Melanie go hiking and camping?") == [
        "How many times did Melanie go hiking", "Melanie camping?"]
    assert bv.sub_queries("What did Melanie paint and draw?") == []  # no how many / total / all / when
    assert bv.sub_queries("When did Melanie paint a sunrise?") == []  # nothing to split


def test_fuse_orders_is_rrf_of_the_full_order_and_its_parts():
    assert bv.fuse_orders([1, 2, 3], [[3, 1, 2]], 1.0) == [1, 3, 2]
    assert bv.fuse_orders([1, 2], [[4]], 1.0) == [1, 4, 2]  # a session only a part found joins


def test_capitalised_words_skip_the_opening_of_sentences_and_lines():
    assert bv.capitalised("Caroline: Hey Mel! We went to Paris.\nMelanie: Wow.") == ["Mel", "Paris"]
