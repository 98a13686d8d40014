"""The re-rank formulas as worked examples, against the naive oracle, the conformance
vectors of Memsense itself, and the invariants of STYLE.md as property tests."""
from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.rank import mmr
from core.config import Config
from core.rank.fusion import live_mask
from core.rank.fusion.rrf import fuse as rrf
from core.rank.naive import naive_rerank, to_lists
from core.rank.replay import replay, replay_case
from core.rank.rerank import rerank
from core.rank.score import clamp01, final_score
from core.rank.synthetic import synthetic_pool
from core.rank.turn_support import turn_support
from core.recall.pool import PoolTooShallow, RecallPool, deepen, unit_rows
from core.records import ROUTES, Chunk

from tests.fixtures import shared_file


def chunk(mid: str, kind: str = "turn", session: str = "u:S001", tags=(), memory_score=0.5, order=0) -> Chunk:
    return Chunk(mid, "u", session, int(session[-3:]), kind, order, "2023-05-08T13:56:00", f"user {mid}",
                 f"assistant {mid}", tags=tuple(tags), memory_score=memory_score)


def pool_of(chunks, ranks, vectors=None) -> RecallPool:
    n = len(chunks)
    r = np.zeros((n, 8), dtype=np.int32)
    for i, row in enumerate(ranks):
        for route, rank in row.items():
            r[i, ROUTES.index(route)] = rank
    vecs = np.eye(n, max(n, 2)) if vectors is None else np.asarray(vectors, dtype=float)
    return RecallPool("q", "u", tuple(chunks), r, np.where(r > 0, 1.0 / np.maximum(r, 1), np.nan), vecs, depth=100)


# -- §3 fusion and final score ------------------------------------------------------------------------
def test_rrf_worked_example():
    cfg = Config()
    ranks = np.array([[1, 3, 0, 0, 2, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]], dtype=np.int32)
    fused, contrib = rrf(ranks, np.zeros(ranks.shape), live_mask(ranks, cfg), cfg)
    assert fused[0] == pytest.approx(1 / (15 + 1) + 1 / (15 + 3) + 1 / (15 + 2))
    assert fused[1] == pytest.approx(1 / 16)
    assert contrib[0, ROUTES.index("lexical")] == pytest.approx(1 / 17)


def test_weighted_rrf_and_zero_weight_removes_route():
    cfg = replace(Config(), rrf_k=60).with_weights(vec_full=2.0, lexical=0.0)
    ranks = np.zeros((2, len(ROUTES)), dtype=np.int32)
    ranks[0, ROUTES.index("vec_full")] = 4
    ranks[1, ROUTES.index("lexical")] = 1
    live = live_mask(ranks, cfg)
    fused, _ = rrf(ranks, np.zeros(ranks.shape), live, cfg)
    assert fused[0] == pytest.approx(2.0 / (60 + 4))
    assert not live[1].any() and fused[1] == 0


def test_route_limit_cuts_deep_ranks():
    cfg = Config()  # route_limit 64
    ranks = np.zeros((1, len(ROUTES)), dtype=np.int32)
    ranks[0, 0], ranks[0, 1] = 64, 65
    assert live_mask(ranks, cfg)[0, :2].tolist() == [True, False]


@pytest.mark.parametrize("value, expected", [(0.5, 0.5), (1.5, 1.0), (-0.2, 0.0), (None, 0.5), ("x", 0.5),
                                             (float("nan"), 0.5), (True, 0.5), (0.65, 0.65)])
def test_clamp01(value, expected):
    assert clamp01(value) == expected


def test_final_score_rounds_to_six_decimals():
    assert final_score(0.1234564, 0.5, 0.1) == round(0.1234564 + 0.05, 6) == 0.173456
    assert final_score(0.2, 7, 0.1) == 0.3


# -- §4 turn support -------------------------------------------------------------------------------------
def test_turn_support_formula():
    assert turn_support(0.1, 0.12, 0.6) == pytest.approx(0.06)
    assert turn_support(0.5, 0.12, 0.6) == 0.12


def test_session_first_adds_turn_support_and_fetches_sessions():
    chunks = [chunk("u:S001:P00", "session", "u:S001"), chunk("u:S001:T000", "turn", "u:S001"),
              chunk("u:S001:T001", "turn", "u:S001", order=1), chunk("u:S002:P00", "session", "u:S002"),
              chunk("u:S002:T000", "turn", "u:S002")]
    ranks = [{}, {"vec_full": 1, "lexical": 2}, {"vec_user": 1}, {"vec_full": 3}, {"lexical": 1}]
    r = rerank(pool_of(chunks, ranks), Config())
    assert r.session_first
    rows = {r.pool.chunks[row.index].memory_id: row for row in r.rows}
    best1 = 1 / 16 + 1 / 17  # T000 beats T001 (1/16)
    s1 = rows["u:S001:P00"]
    assert s1.session_rrf_score == 0 and s1.supporting_turn_count == 2
    assert s1.turn_support == pytest.approx(min(0.12, 0.6 * best1))
    assert s1.routes == ("turn_support",) and s1.best_turn_routes == ("lexical", "vec_full")
    s2 = rows["u:S002:P00"]
    assert s2.rrf_score == pytest.approx(1 / 18 + 0.6 / 16)
    assert s2.routes == ("vec_full", "turn_support")
    assert set(r.result_ids) == {"u:S001:P00", "u:S002:P00"}  # turn chunks never returned
    res = r.results[0]["explain"]
    assert res["session_first"] is True and "supporting_turn_count" in res and "best_turn_routes" in res


def test_fallback_path_returns_turns_with_neighbors():
    chunks = [chunk(f"u:S001:T00{i}", "turn", "u:S001", order=i) for i in range(3)]
    pool = pool_of(chunks, [{"vec_full": 2}, {"vec_full": 1}, {}])
    neighbors = {c.memory_id: (chunks[i - 1].memory_id if i else None, chunks[i + 1].memory_id if i < 2 else None)
                 for i, c in enumerate(chunks)}
    pool = replace(pool, neighbors=neighbors, user_chunks={c.memory_id: c for c in chunks})
    r = rerank(pool, Config())
    assert not r.session_first
    assert r.result_ids == ["u:S001:T001", "u:S001:T000"]
    top = r.results[0]
    assert [(n["relation"], n["memory_id"]) for n in top["neighbors"]] == [("previous", "u:S001:T000"),
                                                                            ("next", "u:S001:T002")]
    assert "session_first" not in top["explain"]


# -- §5 MMR -------------------------------------------------------------------------------------------
def test_mmr_duplicate_skip_and_fallback_fill():
    # three rows; b is a near copy of a, c is distinct
    unit, dims = unit_rows([[1, 0], [0.99, 0.01], [0, 1]])
    final = np.array([0.3, 0.25, 0.1])
    tags = mmr.tag_matrix([(), (), ()])
    sel = mmr.select(final, unit, dims, tags, top_k=3, mmr_lambda=0.78, duplicate_threshold=0.94, tag_weight=0.35)
    assert sel.order == (0, 2, 1)
    assert sel.steps[1].skipped[0][0] == 1 and sel.steps[1].skipped[0][2] == 0  # b skipped as duplicate of a
    assert sel.steps[1].mmr_score == pytest.approx(0.78 * 0.1 - 0.22 * 0.0)
    assert sel.steps[2].fallback and sel.selected_rank == (None, 1, None)


def test_mmr_redundancy_uses_tag_jaccard():
    unit, dims = unit_rows([None, None, None])
    tags = mmr.tag_matrix([("a", "b"), ("a", "b"), ("c",)])
    sel = mmr.select(np.array([0.3, 0.29, 0.1]), unit, dims, tags, top_k=2, mmr_lambda=0.5,
                     duplicate_threshold=0.94, tag_weight=0.35)
    # row1: 0.5·0.29 − 0.5·0.35 = −0.03; row2: 0.5·0.1 − 0 = 0.05 -> row2 wins despite lower final score
    assert sel.order == (0, 2)
    assert sel.max_redundancy[1] == pytest.approx(0.35) and sel.redundant_with[1] == 0


def test_mmr_dimension_mismatch_is_zero_cosine():
    unit, dims = unit_rows([[1, 0, 0], [1, 0]])
    assert mmr.redundancy_to(0, unit, dims, mmr.tag_matrix([(), ()]), np.zeros(2), 0.35)[1] == 0


# -- oracle, conformance, replay ----------------------------------------------------------------------------
configs = st.builds(
    lambda lam, thr, alpha, k, top_k, w, sf: replace(Config(), mmr_lambda=lam, duplicate_threshold=thr, alpha=alpha,
                                                     rrf_k=k, top_k=top_k, session_first=sf).with_weights(**w),
    st.floats(0, 1), st.floats(0.3, 1), st.floats(0, 1), st.sampled_from([1, 15, 60]), st.integers(1, 10),
    st.dictionaries(st.sampled_from(ROUTES), st.sampled_from([0.0, 0.5, 1.0, 3.0]), max_size=8), st.booleans())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), cfg=configs, sessions=st.integers(1, 6), turns=st.integers(0, 6))
def test_matches_naive_oracle(seed, cfg, sessions, turns):
    pool = synthetic_pool(n_sessions=sessions, turns_per_session=turns, dim=6, seed=seed)
    got = [(r["memory_id"], r["final_score"]) for r in rerank(pool, cfg).results]
    assert got == naive_rerank(to_lists(pool), cfg)


def test_conformance_vectors_reproduce_memsense():
    cases = json.loads(shared_file("conformance", "memsense-rerank-cases.json").read_text())
    expected = {e["name"]: e for e in json.loads(shared_file("conformance", "memsense-rerank-expected.json").read_text())}
    out = replay(cases)
    assert len(out) == len(cases) == len(expected)
    for case in out:
        want = expected[case["name"]]
        assert [r["memory_id"] for r in case["results"]] == want["ids"], case["name"]
        assert np.allclose([r["final_score"] for r in case["results"]], want["final_scores"], atol=1e-6, rtol=0)
        assert [r["explain"]["diversity"]["selected_rank"] for r in case["results"]] == want["selected_rank"]


def test_replay_accepts_string_and_null_embeddings():
    case = {"name": "x", "top_k": 2, "options": {}, "rows": [
        {"memory_id": "a", "rrf_score": 0.2, "score": 0.5, "embedding": "[1, 0]", "tags": [], "routes": ["lexical"]},
        {"memory_id": "b", "rrf_score": 0.1, "score": None, "embedding": None, "tags": [], "routes": []}]}
    out = replay_case(case)
    assert [r["memory_id"] for r in out["results"]] == ["a", "b"]
    assert out["results"][1]["final_score"] == 0.15


@pytest.mark.parametrize("case, message", [
    ({"rows": [{"memory_id": "a"}]}, "needs memory_id and rrf_score"),
    ({"rows": [{"memory_id": "a", "rrf_score": "hi"}]}, "rrf_score must be a finite number"),
    ({"rows": [{"memory_id": "a", "rrf_score": float("inf")}]}, "rrf_score must be a finite number"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1, "score": float("-inf")}]}, "score must be a finite number"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1, "embedding": [1.0, float("nan")]}]}, "embedding[1] is nan"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1, "embedding": "[1, NaN]"}]}, "embedding[1] is nan"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1, "tags": "running"}]}, "tags must be a list of strings"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1, "tags": 5}]}, "tags must be a list of strings"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1, "routes": "lexical"}]}, "routes must be a list of strings"),
    ({"rows": [{"memory_id": None, "rrf_score": 0.1}]}, "memory_id must be non-empty text"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1}, {"memory_id": "a", "rrf_score": 0.2}]}, "appears twice"),
    ({"rows": [], "options": {"gamma": 1}}, "unknown option(s) gamma"),
    ({"rows": [{"memory_id": "a", "rrf_score": 0.1, "embedding": "[1,"}]}, "embedding string"),
    ({"rows": [], "options": {"lambda": float("nan")}}, "mmr_lambda: must be a finite number"),
    ("nope", "a case is an object"),
])
def test_replay_bad_rows(case, message):
    from core.errors import MemsenseError

    with pytest.raises(MemsenseError, match=re.escape(message)):
        replay(case)


# -- properties of STYLE.md ------------------------------------------------------------------------------
plain = dict(session_first=False, mmr_lambda=1.0, duplicate_threshold=1.0, alpha=0.0, tag_weight=0.0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), route=st.sampled_from(ROUTES))
def test_single_route_reproduces_its_order(seed, route):
    pool = synthetic_pool(n_sessions=4, turns_per_session=4, dim=6, seed=seed)
    weights = {r: (1.0 if r == route else 0.0) for r in ROUTES}
    cfg = replace(Config(), top_k=10, route_weights=weights, **plain)
    j = ROUTES.index(route)
    found = [i for i in np.argsort(pool.ranks[:, j]) if pool.ranks[i, j] > 0][:10]
    vectors_distinct = rerank(replace(pool, vectors=np.zeros_like(pool.vectors)), cfg)
    assert vectors_distinct.result_ids == [pool.chunks[i].memory_id for i in found]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), perm=st.permutations(range(len(ROUTES))), cfg=configs)
def test_permuting_routes_changes_nothing(seed, perm, cfg):
    pool = synthetic_pool(n_sessions=4, turns_per_session=3, dim=6, seed=seed)
    shuffled = replace(pool, ranks=pool.ranks[:, perm], scores=pool.scores[:, perm])
    weights = {ROUTES[k]: cfg.weight(ROUTES[p]) for k, p in enumerate(perm)}
    a = rerank(pool, cfg)
    b = rerank(shuffled, replace(cfg, route_weights=weights))
    assert a.result_ids == b.result_ids
    assert [r["final_score"] for r in a.results] == [r["final_score"] for r in b.results]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), sf=st.booleans())
def test_lambda_one_without_duplicates_is_relevance_order(seed, sf):
    pool = synthetic_pool(n_sessions=5, turns_per_session=3, dim=6, seed=seed)
    cfg = replace(Config(), mmr_lambda=1.0, duplicate_threshold=1.01 if False else 1.0, top_k=6, session_first=sf)
    r = rerank(replace(pool, vectors=np.zeros_like(pool.vectors)), replace(cfg, tag_weight=0.0))
    finals = [x["final_score"] for x in r.results]
    assert finals == sorted(finals, reverse=True)
    assert r.result_ids == [pool.chunks[row.index].memory_id for row in r.rows[: len(r.result_ids)]]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), route=st.sampled_from(ROUTES), w=st.floats(0.1, 4), extra=st.floats(0.01, 1))
def test_raising_a_weight_never_lowers_a_chunk_found_only_by_it(seed, route, w, extra):
    pool = synthetic_pool(n_sessions=4, turns_per_session=4, dim=6, seed=seed)
    j = ROUTES.index(route)
    cfg = replace(Config(), **plain).with_weights(**{route: w})
    low, high = rerank(pool, cfg), rerank(pool, cfg.with_weights(**{route: w + extra}))
    only = [i for i in range(pool.size) if pool.ranks[i, j] > 0 and (pool.ranks[i] > 0).sum() == 1]
    others = [i for i in range(pool.size) if pool.ranks[i, j] == 0]
    for i in only:
        assert high.fused[i] >= low.fused[i]
        beaten_low = sum(low.fused[o] > low.fused[i] for o in others)
        beaten_high = sum(high.fused[o] > high.fused[i] for o in others)
        assert beaten_high <= beaten_low


# -- why not -----------------------------------------------------------------------------------------------------
def test_fates_cover_every_case():
    chunks = [chunk(f"u:S001:T{i:03d}", "turn", "u:S001", order=i) for i in range(40)] + [chunk("u:S001:T999", "turn")]
    ranks = [{"vec_full": i + 1} for i in range(40)] + [{}]
    ranks[39] = {"lexical": 70}  # beyond route_limit 64
    ranks[38] = {"vec_next_user": 1}  # only a zero-weight route
    vecs = np.zeros((41, 4))
    vecs[:, 0] = 1  # all identical -> duplicates
    pool = pool_of(chunks, ranks, vecs)
    cfg = Config().with_weights(vec_next_user=0.0)
    r = rerank(pool, cfg)
    fate = {m: r.fate(m) for m in ["u:S001:T000", "u:S001:T001", "u:S001:T035", "u:S001:T038", "u:S001:T039",
                                   "u:S001:T999", "u:S001:T005"]}
    assert fate["u:S001:T000"].status == "selected" and fate["u:S001:T000"].rank == 1
    assert fate["u:S001:T001"].status == "fallback_fill"
    assert fate["u:S001:T005"].status == "duplicate" and fate["u:S001:T005"].duplicate_of == "u:S001:T000"
    assert fate["u:S001:T035"].status == "cut_from_pool" and "outside the pool of 32" in fate["u:S001:T035"].reason
    assert fate["u:S001:T038"].status == "zero_weight"
    assert fate["u:S001:T039"].status == "beyond_route_limit"
    assert fate["u:S001:T999"].status == "absent"
    r2 = rerank(replace(pool, vectors=np.zeros((41, 4))), replace(cfg, mmr_lambda=1.0, top_k=2))
    assert r2.fate("u:S001:T005").status == "outranked"


# -- depth is a value: a re-rank cuts a deeper pool and refuses a shallower one, never searching ----------
class Untouchable:
    """A pool's deepening source that fails the test if anything reads it."""

    def __getattribute__(self, name):
        raise AssertionError(f"the re-rank touched the pool's deepening source ({name})")


def test_rerank_refuses_a_too_shallow_pool_and_never_deepens():
    base = replace(synthetic_pool(n_sessions=30, seed=4), exact=True)
    shallow = replace(base.cut(20), source=Untouchable())
    assert not shallow.exhausted
    narrow = replace(Config(), top_k=4, candidate_multiplier=4, candidate_min=1, route_multiplier=1, route_min=1)
    assert narrow.route_limit == 16
    assert rerank(shallow, narrow).results == rerank(base, narrow).results  # cut from 20 to 16: no search
    with pytest.raises(PoolTooShallow) as err:
        rerank(shallow, Config())
    message = str(err.value)
    assert "20 deep" in message and f"need {Config().route_limit}" in message and "deepen" in message
    assert "\n" not in message
    deep = replace(base, source=Untouchable())
    assert rerank(deep, Config()).results == rerank(base, Config()).results


def test_a_pool_whose_lists_ended_early_serves_any_depth():
    pool = synthetic_pool(n_sessions=4, seed=2)
    lists_end = int(pool.ranks.max())
    ended = replace(pool, depth=lists_end + 1)
    assert ended.exhausted and ended.serves(4000)
    assert rerank(ended, replace(Config(), top_k=50)).pool is ended
    assert deepen(ended, 4000) is ended


def test_cutting_a_deep_pool_gives_the_ranking_of_a_shallow_one():
    """An exact pool cut to a config's route_limit re-ranks like the uncut pool (ranks beyond
    route_limit never count), and the cut holds only what those lists and their sessions hold."""
    base = replace(synthetic_pool(n_sessions=30, seed=9), exact=True)
    cfg = replace(Config(), top_k=3)
    ranking = rerank(base, cfg)
    assert ranking.pool.depth == cfg.route_limit < base.depth
    found = (ranking.pool.ranks > 0).any(axis=1)
    assert int(ranking.pool.ranks.max()) <= cfg.route_limit
    assert all(c.kind == "session" for c, f in zip(ranking.pool.chunks, found) if not f)
    whole = rerank(replace(base, exact=False), cfg)  # a fixed pool is re-ranked whole
    assert whole.pool is not ranking.pool and whole.result_ids == ranking.result_ids
