"""Route rankings treat float noise as ties, ordered by id (core.recall.ties), everywhere."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.recall.store import top_rows
from core.recall import ties
from core.recall.ties import TIE_TOLERANCE, rank_route, ranked_lists, ranked_rows, ranked_scores, tied


def test_noise_tied_scores_are_one_group_in_row_order_with_the_best_score():
    rows = np.array([3, 1, 2, 0])
    scores = np.array([0.5, 0.5 + 1e-9, 0.5 - 2e-9, 0.3])
    out_rows, out_scores = rank_route(rows, scores)
    assert out_rows.tolist() == [1, 2, 3, 0]
    assert out_scores.tolist() == [0.5 + 1e-9] * 3 + [0.3]


def test_scores_further_apart_than_the_tolerance_keep_their_order():
    rows = np.array([0, 1])
    scores = np.array([0.5, 0.5 + 10 * TIE_TOLERANCE])
    assert rank_route(rows, scores)[0].tolist() == [1, 0]
    assert not tied(0.5, 0.5 + 10 * TIE_TOLERANCE) and tied(20.0, 20.0 + 10 * TIE_TOLERANCE)  # relative for BM25


@given(st.lists(st.integers(0, 50), min_size=1, max_size=40),
       st.lists(st.floats(-5e-8, 5e-8), min_size=40, max_size=40), st.randoms())
def test_the_ranking_does_not_depend_on_noise_or_input_order(levels, noise, rnd):
    """Scores on a grid 1e-3 apart, each with its own noise: any noise, any order, one ranking."""
    base = np.array(levels, dtype=np.float64) / 1000
    rows = np.arange(len(base))
    clean = rank_route(rows, base)[0]
    perm = np.array(rnd.sample(range(len(base)), len(base)))
    noisy = rank_route(rows[perm], (base + np.array(noise[: len(base)]))[perm])[0]
    assert noisy.tolist() == clean.tolist()
    assert clean.tolist() == sorted(rows.tolist(), key=lambda r: (-base[r], r))


def test_a_tie_group_across_the_cut_is_fetched_whole_before_cutting():
    """The store returns tied hits in its own order; rows 0-9 all tie, the cut is at 3."""
    scores = np.array([0.9] + [0.5 + k * 1e-9 for k in range(9)])
    store_order = np.array([0, 9, 7, 8, 6, 5, 4, 3, 2, 1])  # a backend's arbitrary tie order
    asked = []

    def fetch(routes, n):
        asked.append(n)
        rows = store_order[:n]
        return {r: (rows, scores[rows]) for r in routes}

    (rows, out_scores), = ranked_lists(fetch, ["vec_full"], 3).values()
    assert rows.tolist() == [0, 1, 2]
    assert asked == [4, 8, 16]  # one past the cut, then deeper until the list ran out
    assert out_scores[1] == out_scores[2] == scores[9]


def plain_walk(rows, scores):
    """The grouping rule written as a plain walk over the whole sorted list: the oracle."""
    rows, scores = np.asarray(rows, dtype=np.int64), np.asarray(scores, dtype=np.float64)
    order = np.lexsort((rows, -scores))
    rows, scores = rows[order], scores[order]
    out_rows, out_scores, start = rows.copy(), scores.copy(), 0
    while start < len(rows):
        end = start + 1
        while end < len(rows) and tied(float(scores[start]), float(scores[end])):
            end += 1
        out_rows[start:end], out_scores[start:end] = np.sort(rows[start:end]), scores[start]
        start = end
    return out_rows.tolist(), out_scores.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_rank_route_equals_the_plain_walk(seed):
    rng = np.random.default_rng(seed)
    for _ in range(400):
        n = int(rng.integers(0, 300))  # both sides of WALK_UP_TO
        base = rng.choice([1.0, 10.0, 0.3, 1e-3]) * rng.integers(rng.choice([0, -3]), 6, size=n).astype(float)
        scores = base + rng.choice([0, 1e-9, 1e-7, 5e-7, 2e-6]) * rng.choice([1, 30]) * rng.standard_normal(n)
        rows = rng.permutation(1000)[:n]
        got = rank_route(rows, scores)
        assert (got[0].tolist(), got[1].tolist()) == plain_walk(rows, scores)


def lists_one_by_one(matrix: np.ndarray, depth: int) -> list[tuple[list, list]]:
    """Each route's list the plain way: `ranked_lists` fetching `top_rows` of its row."""
    def fetch(routes, n):
        out = {}
        for r in routes:
            rows = top_rows(matrix[r], n)
            out[r] = (rows.astype(np.int64), matrix[r][rows].astype(np.float64))
        return out
    lists = ranked_lists(fetch, list(range(len(matrix))), depth)
    return [(lists[r][0].tolist(), lists[r][1].tolist()) for r in range(len(matrix))]


@pytest.mark.parametrize("preselect", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_ranked_rows_of_a_matrix_equal_the_lists_made_one_route_at_a_time(seed, preselect, monkeypatch):
    """The batched ranking (one partition and one tie walk for every dense route) gives the
    plain path's arrays: noise ties across the cut, exact ties at the partition's cut, rows
    without a vector (-inf), NaN, routes with fewer hits than asked, float32 and float64;
    also when every matrix is first cut to the candidates above a sampled bar (as lists of
    `PRESELECT_FROM` or more are), whether that cut is taken or refused."""
    if preselect:
        monkeypatch.setattr(ties, "PRESELECT_FROM", 1)
        monkeypatch.setattr(ties, "SAMPLE", 16)
    rng = np.random.default_rng(seed)
    for _ in range(100):
        k, n, depth = int(rng.integers(1, 8)), int(rng.integers(1, 300)), int(rng.integers(1, 80))
        levels = rng.choice([1.0, 0.37, 12.0]) * rng.integers(0, int(rng.integers(1, 40)), size=(k, n))
        noise = rng.choice([0, 1e-9, 3e-7, 2e-6]) * rng.standard_normal((k, n))
        matrix = (levels + noise).astype(rng.choice([np.float32, np.float64]))
        matrix[rng.random((k, n)) < rng.choice([0, 0.1, 0.9])] = -np.inf
        if rng.random() < 0.1:
            matrix[rng.random((k, n)) < 0.05] = np.nan
        got = [(rows.tolist(), scores.tolist()) for rows, scores in ranked_rows(matrix, depth)]
        assert got == lists_one_by_one(matrix, depth)
        for rows, scores in ranked_rows(matrix, depth):
            assert rows.dtype == np.int64 and scores.dtype == np.float64


def test_long_route_lists_cut_to_sampled_candidates_rank_as_the_plain_path():
    """Routes of `PRESELECT_FROM` scores or more (a user of 1,024 chunks or more) are first cut to
    the columns above a bar read from a sample (every `STRIDE`-th score of a shorter list, about
    `SAMPLE` of a longer one); with exact ties at every level, noise, rows without a vector and a
    route almost empty (its bar is -inf: every column a candidate), the lists are the plain ones.
    (Refused cuts: the test above, with small lists cut the same way.)"""
    rng = np.random.default_rng(7)
    for trial, n in enumerate([ties.PRESELECT_FROM + 808] * 12 + [ties.STRIDE * ties.SAMPLE * 2 + 808] * 3):
        levels = rng.integers(0, rng.choice([50, 5000]), size=(7, n)) / 97.0
        matrix = (levels + rng.choice([0, 3e-7]) * rng.standard_normal((7, n))).astype(np.float32)
        matrix[rng.random((7, n)) < 0.1] = -np.inf
        if trial % 3 == 0:
            matrix[3, rng.random(n) < 0.995] = -np.inf
        depth = int(rng.choice([8, 64, 200]))
        got = [(rows.tolist(), scores.tolist()) for rows, scores in ranked_rows(matrix, depth)]
        assert got == lists_one_by_one(matrix, depth)


def positive_rows(scores: np.ndarray, limit: int) -> np.ndarray:
    """`top_rows` of the positive finite scores only: a lexical score of 0 is no match."""
    hit = np.flatnonzero((scores > 0) & (scores < np.inf))
    return hit[top_rows(scores[hit], limit)]


@pytest.mark.parametrize("sort_up_to", [ties.SORT_UP_TO, 0])
@pytest.mark.parametrize("seed", range(3))
def test_ranked_scores_equal_ranked_lists_fetching_the_best_rows(seed, sort_up_to, monkeypatch):
    """One route's list from its full scores (lexical, session routes) is what `ranked_lists`
    gives fetching `top_rows` (of the positive scores only with `positive`: 0 and below is no hit), whether
    the hits are sorted whole or fetched deeper and deeper: noise ties and exact ties across
    the cut, zeros, negatives, -inf, NaN, fewer hits than asked, float32 and float64."""
    monkeypatch.setattr(ties, "SORT_UP_TO", sort_up_to)
    rng = np.random.default_rng(seed)
    for _ in range(300):
        n, depth = int(rng.integers(0, 400)), int(rng.integers(1, 80))
        levels = rng.choice([1.0, 0.37, 12.0]) * rng.integers(int(rng.choice([0, -3])), int(rng.integers(1, 40)), size=n)
        scores = (levels + rng.choice([0, 1e-9, 3e-7, 2e-6]) * rng.standard_normal(n)).astype(rng.choice([np.float32, np.float64]))
        scores[rng.random(n) < rng.choice([0, 0.1, 0.9])] = -np.inf
        if rng.random() < 0.1:
            scores[rng.random(n) < 0.05] = np.nan
        for positive, best in ((False, top_rows), (True, positive_rows)):
            def fetch(_, k, best=best, scores=scores):
                rows = best(scores, k)
                return {"": (rows, scores[rows])}

            want = ranked_lists(fetch, [""], depth)[""]
            rows, values = ranked_scores(scores, depth, positive=positive)
            assert (rows.tolist(), values.tolist()) == (want[0].tolist(), want[1].tolist())
            assert rows.dtype == np.int64 and values.dtype == np.float64


@pytest.mark.parametrize("seed", range(3))
def test_a_list_ranked_from_the_rows_list_reach_keeps_is_the_list_from_every_row(seed):
    """`list_reach(scores, reach)` keeps few rows of a long route, and every list at most
    `reach` deep ranked from those rows alone is the list `ranked_lists` gives from every row:
    noise ties and exact ties across the cut, staircases of gaps just under the tolerance (each
    step tied to the last, not to the head), zeros, negatives, -inf, NaN, float32 and float64."""
    rng = np.random.default_rng(seed)
    for case in range(200):
        n, reach = int(rng.integers(0, 600)), int(rng.integers(1, 60))
        levels = rng.choice([1.0, 0.37, 12.0]) * rng.integers(int(rng.choice([0, -3])), int(rng.integers(1, 40)), size=n)
        scores = (levels + rng.choice([0, 1e-9, 3e-7, 2e-6]) * rng.standard_normal(n))
        if n and case % 4 == 0:  # a staircase through the cut: each step within the tolerance of the one before
            order = np.argsort(-scores, kind="stable")
            at = order[max(0, min(reach, n - 1) - 10): reach + 30]
            head = scores[at[0]]
            scores[at] = head - 0.9 * TIE_TOLERANCE * max(1.0, abs(head)) * np.arange(len(at))
        scores = scores.astype(rng.choice([np.float32, np.float64]))
        scores[rng.random(n) < rng.choice([0, 0.1, 0.9])] = -np.inf
        if rng.random() < 0.1:
            scores[rng.random(n) < 0.05] = np.nan
        for positive, best in ((False, top_rows), (True, positive_rows)):
            kept = ties.list_reach(scores, reach, positive=positive)
            assert (np.diff(kept) > 0).all()
            for depth in sorted({1, reach // 2 + 1, reach}):
                def fetch(_, k, best=best, scores=scores):
                    rows = best(scores, k)
                    return {"": (rows, scores[rows])}

                want = ranked_lists(fetch, [""], depth)[""]
                places, values = ranked_scores(scores[kept], depth, positive=positive)
                assert (kept[places].tolist(), values.tolist()) == (want[0].tolist(), want[1].tolist())
    wide = np.random.default_rng(9).standard_normal(50_000).astype(np.float32)
    assert len(ties.list_reach(wide, 100)) < 110  # a long route of untied scores keeps about its reach
