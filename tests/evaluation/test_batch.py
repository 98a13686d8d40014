"""Batched re-rank (tuning's inner loop) against `rerank` itself: the same sessions, in the same order."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.config import Config
from core.evaluation.batch import PICKS, TABLE_BYTES, PoolBatch, round6
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool


def pools():
    out = [synthetic_pool(n_sessions=s, turns_per_session=t, dim=12, seed=seed, route_hit_rate=rate)
           for seed, (s, t, rate) in enumerate([(8, 6, 0.6), (3, 2, 0.3), (12, 9, 0.8), (1, 0, 0.5), (6, 4, 0.05)])]
    # exact duplicates: MMR's duplicate test and its ties see identical vectors
    return out + [synthetic_pool(n_sessions=5, turns_per_session=3, dim=4, seed=9)]


def random_configs(seed: int, n: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        cfg = replace(Config(), rrf_k=float(rng.choice([0.0, 1.0, 15.0, 60.0])), alpha=float(rng.choice([0.0, 0.1, 1.0])),
                      mmr_lambda=float(rng.random()), duplicate_threshold=float(rng.choice([0.3, 0.9, 0.94, 1.0])),
                      top_k=int(rng.integers(1, 12)), candidate_min=int(rng.integers(1, 40)),
                      turn_support_cap=float(rng.choice([0.0, 0.12, 1.0])), turn_support_factor=float(rng.random() * 2),
                      session_first=bool(rng.random() < 0.8), fallback_fill=bool(rng.random() < 0.8))
        cfg = cfg.with_weights(lexical=float(rng.choice([0.0, 1.0, 2.5])), vec_user=float(rng.choice([0.0, 1.0])))
        # beyond Memsense: the session routes and selection by session
        yield replace(cfg.with_weights(session_lexical=float(rng.choice([0.0, 2.0])), session_dense=float(rng.choice([0.0, 1.0]))),
                      distinct_sessions=bool(rng.random() < 0.5))


@pytest.mark.parametrize("seed,table_bytes,picks", [(0, TABLE_BYTES, 10**6), (1, TABLE_BYTES, PICKS),
                                                    (2, 40_000, 10**6), (3, 0, 10**6)])
def test_batch_selects_what_rerank_selects(seed, table_bytes, picks):
    """With cosine tables for every user, as the batch chooses, for some users, and for none
    (each pick's row computed when first taken, then kept)."""
    ps = pools()
    batch = PoolBatch(ps, table_bytes=table_bytes, picks=picks)
    tables = {0: [True, True], 2: [False, True], 3: [False, False]}  # users: the dim-12 pools, the dim-4 one
    if seed in tables:
        assert batch.pairs is not None and batch.pairs.tabled.tolist() == tables[seed]
    bare = batch.without_arrays()
    for cfg in random_configs(seed, 40):
        expected = [[p.chunks[r.index].session_number for r in rerank(p, cfg).selected_rows] for p in ps]
        assert batch.selected_sessions(cfg) == expected, cfg
        assert bare.selected_sessions(cfg) == expected, cfg
        assert bare.batched(cfg) == batch.batched(cfg)


def test_other_schemes_go_through_rerank():
    ps = pools()
    for scheme in ("linear", "quality", "top_rank_bonus"):
        cfg = replace(Config(), scheme=scheme)
        expected = [[p.chunks[r.index].session_number for r in rerank(p, cfg).selected_rows] for p in ps]
        assert PoolBatch(ps).selected_sessions(cfg) == expected


def test_round6_is_javascripts_to_fixed():
    """Memsense rounds final scores with Number(x.toFixed(6)): exact ties away from zero."""
    import math

    from core.rank.score import to_fixed

    rng = np.random.default_rng(5)
    values = np.concatenate([rng.random(20000) * 3, rng.integers(0, 10**7, 5000) / 1e6 + 5e-7,  # halves
                             np.array([0.0, -0.0, 1e-7, 0.1234565, 2.5e-6, 1e17, np.inf, -1.0000005, 1 / 128])])
    expected = [float(to_fixed(float(v), 6)) if math.isfinite(v) else float(v) for v in values]
    assert round6(values).tolist() == expected
    assert round6(np.array([1 / 128]))[0] == 0.007813 != round(1 / 128, 6)



def engine_pools(engine):
    """The demo questions' pools as the engine gives them (rows of each user's chunks and
    vectors), and a third of them again, cut shallower."""
    from core.ingest.questions import load_questions
    from core.recall.engine import DEMO_QUESTIONS

    questions = load_questions(DEMO_QUESTIONS)
    ps = [engine.recall(q.user_id, q.text, 128) for q in questions]
    ps += [p.at_depth(88) for p in ps[::3]]  # the deepest route_limit of `random_configs`
    return ps, questions


@pytest.mark.parametrize("table_bytes", [TABLE_BYTES, 0])
def test_batch_of_engine_pools_selects_what_rerank_selects(demo_engine, table_bytes):
    ps, _ = engine_pools(demo_engine)
    mixed = ps + [synthetic_pool(n_sessions=4, turns_per_session=3, dim=ps[0].vectors.shape[1], seed=3,
                                 user_id=ps[0].user_id)]  # a user whose pools are not all rows of one index
    batch = PoolBatch(mixed, table_bytes=table_bytes)
    for cfg in random_configs(11, 25):
        expected = [[p.chunks[r.index].session_number for r in rerank(p, cfg).selected_rows] for p in mixed]
        assert batch.selected_sessions(cfg) == expected, cfg


def test_a_batch_over_shared_vectors_selects_what_rerank_selects(demo_engine):
    """Each user's vectors in shared memory, over the rows of every pool (a superset of the
    batch's): the same selections, and no user gets tables."""
    from core.evaluation.batch_chunks import SharedVectors

    ps, _ = engine_pools(demo_engine)
    shared = SharedVectors(ps, share_bytes=0)
    half = ps[::2]
    batch = PoolBatch(half, shared=shared)
    if shared.made:  # Linux: memfd
        assert len(shared.made) == len({p.user_id for p in ps}) and not batch._pairs().tabled.any()
    for cfg in random_configs(12, 20):
        expected = [[p.chunks[r.index].session_number for r in rerank(p, cfg).selected_rows] for p in half]
        assert batch.selected_sessions(cfg) == expected, cfg
    shared.close()


def test_a_user_of_index_rows_is_the_user_chunk_by_chunk(demo_engine):
    """Made at once from the pools' rows, each chunk has the vector (bit for bit), dimension and
    tags that adding the pools chunk by chunk gives it."""
    from core.evaluation.batch_chunks import UserChunks

    ps, _ = engine_pools(demo_engine)
    for user_id in sorted({p.user_id for p in ps}):
        mine = [p for p in ps if p.user_id == user_id]
        made = UserChunks.of_rows(mine)
        assert made is not None
        bulk, bulk_locs = made
        slow = UserChunks(mine[0].vectors.shape[1])
        slow_locs = [slow.add(p) for p in mine]
        assert bulk.size == slow.size
        for a, b in zip(bulk_locs, slow_locs):
            assert np.array_equal(bulk.vectors[a], slow.vectors[b])
            assert [bulk.dims[i] for i in a] == [slow.dims[i] for i in b]
            assert [bulk.tags[i] for i in a] == [slow.tags[i] for i in b]
    assert UserChunks.of_rows([synthetic_pool(n_sessions=2, turns_per_session=2, dim=4, seed=1)]) is None


def test_a_chunk_id_in_two_sessions_keeps_each_session_number():
    """Two pools whose chunks share ids, vectors and tags but not session numbers: each pool's
    selections name its own sessions."""
    first = synthetic_pool(n_sessions=5, turns_per_session=3, dim=8, seed=4, user_id="u")
    moved = replace(first, chunks=tuple(replace(c, session_number=c.session_number + 100) for c in first.chunks))
    batch = PoolBatch([first, moved])
    for cfg in random_configs(12, 10):
        expected = [[p.chunks[r.index].session_number for r in rerank(p, cfg).selected_rows] for p in (first, moved)]
        assert batch.selected_sessions(cfg) == expected, cfg
