"""Pools kept only as deep as the settings need, deepened from the query's cached scores (SPEC §2):
every depth must give the pool, the ranking and the explain a fresh search at that depth gives."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.cli.bench_scale import RandomEmbedder
from core.config import MAX_ROUTE_DEPTH, SCHEMES, TOP_K_MAX, Config
from core.rank.rerank import rerank
from core.recall.backends import open_store
from core.recall.engine import Engine
from core.recall.pool import PoolTooShallow, deepen, deepest
from core.records import DENSE_ROUTES, ROUTES, Chunk

DIM = 8
WORDS = [f"w{i}" for i in range(60)]


def user_data(n_sessions: int, seed: int):
    """Sessions of a session chunk and 1-12 turns. Ties as in real stores: a session's turns
    carry its facet vectors (exact ties), some vec_full rows are copies, BM25 over 60 words."""
    rng = np.random.default_rng(seed)
    chunks, vecs = [], {r: [] for r in DENSE_ROUTES}
    for s in range(n_sessions):
        sid = f"u:S{s:04d}"
        facets = {r: rng.standard_normal(DIM).astype(np.float32) * (rng.random() > 0.2)
                  for r in DENSE_ROUTES if r.startswith("facet")}
        for k in range(int(rng.integers(2, 14))):
            words = " ".join(rng.choice(WORDS, size=int(rng.integers(3, 12))))
            chunks.append(Chunk(f"{sid}:{'P0' if k == 0 else f'T{k:02d}'}", "u", sid, s + 1, "session" if k == 0 else "turn",
                                k, f"2024-{1 + s % 12:02d}-01T10:00:00", words[:20], words[20:],
                                next_user_text=words[:5] if rng.random() < 0.7 else "",
                                tags=tuple(sorted(set(rng.choice(WORDS[:8], size=2)))), task_tag=str(rng.choice(WORDS)),
                                memory_score=float(rng.choice([0.5, 0.35, 0.65]))))
            for r in DENSE_ROUTES:
                v = facets[r] if r in facets else rng.standard_normal(DIM).astype(np.float32)
                if r == "vec_full" and len(vecs[r]) and rng.random() < 0.1:
                    v = vecs[r][-1]  # an exact duplicate of the previous chunk's vector
                if r == "vec_next_user" and not chunks[-1].next_user_text:
                    v = np.zeros(DIM, np.float32)
                vecs[r].append(v)
    return chunks, {r: np.array(v, dtype=np.float32) for r, v in vecs.items()}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    location = tmp_path_factory.mktemp("deepen") / "store"
    chunks, vectors = user_data(260, seed=3)
    store = open_store(location, create=True)
    store.write_user("u", chunks, vectors, RandomEmbedder(DIM).key, DIM)
    store.close()
    e = Engine(location, embedder=RandomEmbedder(DIM))
    yield e
    e.close()


def fresh(engine: Engine, query: str, depth: int):
    """A pool from the store's own route lists at `depth`: the path of a store with no full scan."""
    return engine._fixed(engine._index("u"), "u", query, engine.embedder.encode([query])[0], depth, 0.0)


def assert_same_pool(a, b):
    assert a.depth == b.depth
    assert a.ids == b.ids
    assert np.array_equal(a.ranks, b.ranks)
    assert np.array_equal(a.scores, b.scores, equal_nan=True)
    assert np.array_equal(np.asarray(a.vectors), np.asarray(b.vectors))
    for name in ("is_turn", "session_of", "memory_score", "dims"):
        assert np.array_equal(getattr(a.static, name), getattr(b.static, name)), name


QUERIES = ("w1 w2 w3", "w7", "w10 w11 w12 w13 w14 w15", "w59 w0")


@pytest.mark.parametrize("query", QUERIES)
def test_every_depth_is_the_pool_a_fresh_recall_gives(engine, query):
    rng = np.random.default_rng(len(query))
    depths = [1, 2, 40, 64, 300, 2000, MAX_ROUTE_DEPTH] + rng.integers(1, 3000, size=6).tolist()
    for start in (64, 1, MAX_ROUTE_DEPTH):
        pool = engine.recall("u", query, start)
        for d in rng.permutation(depths).tolist():  # deepen and cut in random order, through the cache
            assert_same_pool(deepen(pool, d), fresh(engine, query, d))


def test_a_pool_is_kept_only_as_deep_as_asked(engine):
    shallow = engine.recall("u", "w1 w2 w3")
    assert shallow.depth == Config().route_limit
    assert int(shallow.ranks.max()) <= shallow.depth
    assert shallow.size < deepest(shallow).size
    assert deepest(shallow).depth == MAX_ROUTE_DEPTH


def random_config(rng: np.random.Generator) -> Config:
    cfg = replace(Config(), scheme=str(rng.choice(SCHEMES)), rrf_k=float(rng.choice([0.0, 1.0, 15.0, 60.0])),
                  alpha=float(rng.choice([0.0, 0.1, 1.0])), mmr_lambda=float(rng.random()),
                  duplicate_threshold=float(rng.choice([0.3, 0.9, 0.94, 1.0])), tag_weight=float(rng.random()),
                  top_k=int(rng.choice([1, 4, 10, 25, TOP_K_MAX])), candidate_multiplier=int(rng.integers(1, 9)),
                  candidate_min=int(rng.choice([1, 8, 32, 300, 2000])), route_multiplier=int(rng.integers(1, 5)),
                  route_min=int(rng.choice([1, 16, 40, 500, 4000])), turn_support_cap=float(rng.choice([0.0, 0.12, 1.0])),
                  turn_support_factor=float(rng.random() * 2), session_first=bool(rng.random() < 0.8),
                  fallback_fill=bool(rng.random() < 0.8), linear_min_score=float(rng.choice([0.0, 0.15, 0.5])),
                  linear_max_results=int(rng.choice([3, 10, 100])), quality_recency_base=float(rng.choice([0.9, 0.995])))
    weights = {r: float(rng.choice([0.0, 0.5, 1.0, 2.5])) for r in ROUTES if rng.random() < 0.5}
    return cfg.with_weights(**{**weights, "vec_full": float(rng.choice([0.5, 1.0]))})


def without_deep_hits(results, limit: int):
    """Results with the route hits a pool deeper than `limit` adds (ranked but not counted) left out."""
    out = []
    for r in results:
        hits = {k: v for k, v in r["explain"]["route_hits"].items() if v["rank"] <= limit}
        out.append({**r, "explain": {**r["explain"], "route_hits": hits}})
    return out


@pytest.mark.parametrize("seed", range(3))
def test_reranks_of_a_deepened_pool_are_those_of_a_fresh_search(engine, seed):
    """Over random configs, a re-rank of the shallow pool (deepened or cut as each config
    asks) gives exactly the ranking, scores and explain of a recall at that config's depth,
    of the full-depth pool, and of a fixed pool kept 8,000 deep (the old way)."""
    rng = np.random.default_rng(seed)
    query = QUERIES[seed]
    shallow, full = engine.recall("u", query), engine.recall("u", query, MAX_ROUTE_DEPTH)
    fixed_full = fresh(engine, query, MAX_ROUTE_DEPTH)
    some_ids = [c.memory_id for c in engine.chunks("u")][::7]
    deep = deepest(shallow)
    for _ in range(25):
        cfg = random_config(rng)
        got = rerank(deepen(shallow, cfg.route_limit), cfg)
        assert got.pool.depth == cfg.route_limit
        for other in (rerank(full, cfg), rerank(fresh(engine, query, cfg.route_limit), cfg)):
            assert got.result_ids == other.result_ids, cfg
            assert got.results == other.results, cfg
        # "why not" reads the deepest pool the query has, so the fixed pool above answers less
        again = rerank(full, cfg)
        assert [got.fate(m, deep) for m in some_ids] == [again.fate(m, deep) for m in some_ids], cfg
        if cfg.scheme == "quality" and not cfg.quality_as_of:
            continue  # its "as of" time is the newest chunk of the pool, so of the pool's depth
        old = rerank(fixed_full, cfg)
        assert got.result_ids == old.result_ids, cfg
        assert got.results == tuple(without_deep_hits(old.results, cfg.route_limit)), cfg
        assert [got.fate(m, deep) for m in some_ids] == [old.fate(m) for m in some_ids], cfg
        assert np.array_equal(got.fused[got.candidates], old.fused[old.candidates]), cfg


def test_a_fixed_pool_keeps_its_depth(engine):
    fixed = fresh(engine, "w1 w2", 64)
    assert fixed.at_depth(40) is fixed
    with pytest.raises(PoolTooShallow, match="keeps route lists 64 deep but these settings need 400"):
        rerank(fixed, replace(Config(), top_k=50))
    assert deepest(fixed) is fixed


def test_a_pickled_pool_still_deepens(engine):
    import pickle

    pool = engine.recall("u", "w1 w2 w3")
    copy = pickle.loads(pickle.dumps(pool))
    assert_same_pool(copy, pool)
    assert_same_pool(deepen(copy, 2000), deepen(pool, 2000))


def test_reads_deepest_says_which_fates_rank_the_deepest_lists(engine):
    """"Why not" needs the query's deepest lists exactly for the chunks `reads_deepest` names
    (the app deepens off the UI thread for those, and passes the deepest pool to the fate): all
    the others' fates leave the pool as deep as it was, and theirs are the fates of the
    unlisted (found deeper, weighted 0, or absent)."""
    from core.rank.explain import reads_deepest

    cfg = replace(Config(), route_weights={**Config().route_weights, "vec_user": 0.0})
    shallow = rerank(engine.recall("u", QUERIES[0], cfg.route_limit), cfg)
    rows = [shallow.pool.chunks[r.index].memory_id for r in shallow.rows]
    others = [c.memory_id for c in engine.chunks("u")][::15]
    seen = set()
    for memory_id in rows[:40] + others:
        ranking = rerank(engine.recall("u", QUERIES[0], cfg.route_limit), cfg)
        source = ranking.pool.source
        reads = reads_deepest(ranking, memory_id)
        fate = ranking.fate(memory_id, deepest(ranking.pool) if reads else None)
        assert source.ready(source.max_depth) == reads, memory_id
        assert (fate.status in ("beyond_route_limit", "zero_weight", "absent")) == reads, (memory_id, fate)
        seen.add(reads)
    assert seen == {True, False}


def copy_of(source, max_depth: int):
    """A new `ScanPools` of `source`'s query and scores, reaching `max_depth`."""
    from core.recall.deepen import ScanPools

    dense, lexical = source._scores
    return ScanPools(source.ix, source.user_id, source.query, dense, lexical, source.timings,
                     max_depth=max_depth, sessions=source.sessions)


@pytest.mark.parametrize("query", QUERIES)
def test_a_shrunk_source_gives_the_same_pool_at_every_depth(engine, query):
    """Shrunk, a query's scores keep only the rows lists `max_depth` deep can hold, far fewer
    bytes on a user larger than that, and every pool up to that depth is the one the whole
    scores give, cut or ranked, through the cache or not."""
    source = engine.recall("u", query).source
    n = len(engine.chunks("u"))
    for reach in (30, 200):
        whole, small = copy_of(source, reach), copy_of(source, reach)
        before = small.nbytes
        small.pool(reach)  # a cached pool, dropped by the shrink
        small.shrink()
        assert small.shrunk and not small.ready(reach)
        assert small.nbytes < before * (4 * reach / n + 0.1)
        rng = np.random.default_rng(reach)
        for d in rng.permutation([1, 2, reach // 3, reach - 1, reach, *rng.integers(1, reach, size=4).tolist()]).tolist():
            assert_same_pool(small.pool(d), whole.pool(d))
            assert_same_pool(copy_of(source, reach).pool(d), small.pool(d))
        with pytest.raises(ValueError, match="deep from scores kept"):
            small._rank(reach + 1)


def test_a_source_as_deep_as_the_user_is_not_shrunk_smaller(engine):
    source = copy_of(engine.recall("u", QUERIES[1]).source, MAX_ROUTE_DEPTH)
    bytes_before = source.nbytes
    deepest_pool = source.pool(MAX_ROUTE_DEPTH)
    source.shrink()
    assert not source.shrunk and source.nbytes == bytes_before  # the cached pool went, the whole scores stay
    assert_same_pool(source.pool(MAX_ROUTE_DEPTH), deepest_pool)


def test_scores_held_stay_within_the_budget_least_recently_used_shrunk_first(engine, monkeypatch):
    """Past `SCORES_HELD_BYTES`, the least recently used sources are shrunk until the rest fit
    (their pools unchanged); a source in use is not; a collected one stops counting."""
    import gc

    from core.recall import deepen as module

    held = module._Held(budget=0)
    monkeypatch.setattr(module, "HELD", held)
    source = engine.recall("u", QUERIES[0]).source
    one = copy_of(source, 40)
    one.pool(40)
    held.budget = int(3.5 * one.nbytes)  # room for three copies, whole and with a pool cached
    del one
    gc.collect()
    copies, pools = [], []
    for _ in range(6):  # each made and used in turn: the oldest are shrunk as the newest come
        copies.append(copy_of(source, 40))
        pools.append(copies[-1].pool(40))
        assert held.total <= held.budget
        shrunk = [c.shrunk for c in copies]
        assert not shrunk[-1] and shrunk == sorted(shrunk, reverse=True)  # the oldest first
    assert copies[0].shrunk and not copies[-2].shrunk
    for c, p in zip(copies, pools):
        assert_same_pool(c.pool(40), p)
        assert_same_pool(c.pool(7), copy_of(source, 40).pool(7))
    total = held.total
    gone = copies.pop()
    size = held._held[id(gone)][1]
    del gone, pools, c, p  # the loop's names held the last copy too
    gc.collect()
    copies[0].pool(3)  # the next note drops the collected one
    assert held.total <= total - size + copies[0].nbytes
    assert len(held._held) == len(copies) + 1  # the six kept here and the engine's own source


def test_sources_that_cannot_shrink_are_not_looked_at_again(engine, monkeypatch):
    """Sources as deep as their user gain nothing by shrinking: past the budget each drops its
    cached pools once, and is not shrunk again until it is used."""
    from core.recall import deepen as module

    held = module._Held(budget=0)
    monkeypatch.setattr(module, "HELD", held)
    source = engine.recall("u", QUERIES[2]).source
    shrinks = []
    monkeypatch.setattr(module.ScanPools, "shrink", lambda self, real=module.ScanPools.shrink: (shrinks.append(self), real(self)))
    copies = [copy_of(source, MAX_ROUTE_DEPTH) for _ in range(5)]
    assert len(shrinks) == len(copies)  # each new one shrank the one before it (the engine's first)
    assert not any(c.shrunk for c in copies) and held._shrinkable == 1  # the newest
    shrinks.clear()
    copies[0].pool(5)
    assert shrinks == [copies[-1]]  # only the one that was still shrinkable
