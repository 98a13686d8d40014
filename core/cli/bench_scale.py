"""`memsense bench --scale N[,N…]`: synthetic stores of N chunks (random unit vectors and
random words, no model), timed end to end against the floor measured in the same run.

Per size: writing the store (one big user plus `--users` − 1 small ones), opening it and
listing its users, the first recall (reads the user: chunks, vectors, BM25 index), the median
and p95 of later recalls (seven dense routes + BM25, lists kept as deep as the default settings
need: their `route_limit`), with and without the query's embedding (the stand-in embedder hashes
the text, and the floor is given the query's vector: the ratio is recall without embedding over
the floor), the cost of deepening a fresh pool to the deepest lists any control
allows (`MAX_ROUTE_DEPTH`, where a slider moved to its maximum takes it), a slider re-rank of
the cached pool at top_k 4 and 50, and the floor: one exact numpy scan of the same seven route
matrices held in memory (`vectors @ query`), which any recall has to pay.

The floor is timed two ways. Back to back (15 scans in a row, the median), as it always was:
the matrix product then finds the vectors in cache and BLAS's second thread awake from the scan
before, a state no recall meets, since each starts after other work. And right after each
recall (one scan per recall, the median): the state a recall's own scan starts in. They differ
most for a small user, whose vectors fit in the processor's last cache level.
"""
from __future__ import annotations

import hashlib
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from core.recall.backends import open_store
from core.config import MAX_ROUTE_DEPTH, Config
from core.recall.engine import Engine
from core.rank.rerank import rerank
from core.recall.pool import deepen
from core.records import DENSE_ROUTES, Chunk

DIM = 384
TURNS_PER_SESSION = 9
SMALL_USER_CHUNKS = 20
QUERIES = 30
WORDS = [f"w{i}" for i in range(5000)]


class RandomEmbedder:
    """Stands in for the model: a unit vector of `dim` components seeded by the text, so a
    query always maps alike. The class attributes are those of the default dimension."""

    key = f"synthetic-random-{DIM}"
    dim = DIM
    embedded = cached = 0
    model_path = Path("(random unit vectors)")

    def __init__(self, dim: int = DIM):
        self.dim = dim
        self.key = f"synthetic-random-{dim}"

    def encode(self, texts: Sequence[str], progress: Any = None, cancelled: Any = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha1(t.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out

    def load(self) -> None:
        pass

    def close(self) -> None:
        pass


def synthetic_user(user_id: str, n: int, rng: np.random.Generator) -> tuple[list[Chunk], dict[str, np.ndarray]]:
    """`n` chunks: sessions of one session chunk and up to 9 turns, random words and vectors;
    a tenth of the facet and next-user vectors are missing, as with real data."""
    words = rng.choice(WORDS, size=(n, 24))
    chunks = []
    for i in range(n):
        s, k = divmod(i, TURNS_PER_SESSION + 1)
        sid = f"{user_id}:S{s:05d}"
        kind = "session" if k == 0 else "turn"
        text = " ".join(words[i])
        chunks.append(Chunk(f"{sid}:{'P00' if k == 0 else f'T{k:03d}'}", user_id, sid, s + 1, kind, k, "2024-01-01T10:00:00",
                            text[:80], text[80:], tags=(str(words[i][0]),), task_tag=str(words[i][1])))
    vectors = {}
    for r in DENSE_ROUTES:
        m = rng.standard_normal((n, DIM), dtype=np.float32)
        if r not in ("vec_full", "vec_user", "vec_asst"):
            m[rng.random(n) < 0.1] = 0
        vectors[r] = m
    return chunks, vectors


def _ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3


def _rss_mb() -> float:
    """This process's resident memory (psutil: Linux, macOS and Windows alike)."""
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def _floor_matrix(store) -> np.ndarray:
    """The numpy floor's operand: the big user's route vectors as one `(7n, dim)` matrix, in memory."""
    return np.ascontiguousarray(store.route_matrix("big")).reshape(-1, DIM)


def bench_size(n: int, users: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed + n)
    with tempfile.TemporaryDirectory() as tmp:
        location = Path(tmp) / "store"
        chunks, vectors = synthetic_user("big", n, rng)
        t = time.perf_counter()
        store = open_store(location, create=True)
        store.write_user("big", chunks, vectors, RandomEmbedder.key, DIM)
        for u in range(users - 1):
            c, v = synthetic_user(f"user{u:05d}", SMALL_USER_CHUNKS, rng)
            store.write_user(f"user{u:05d}", c, v, RandomEmbedder.key, DIM)
        store.close()
        write_s = time.perf_counter() - t
        del chunks, vectors

        t = time.perf_counter()
        engine = Engine(location, embedder=RandomEmbedder())
        listed = len(engine.users())
        open_s = time.perf_counter() - t
        try:
            queries = [" ".join(rng.choice(WORDS, size=6)) for _ in range(QUERIES + 1)]
            first = _ms(lambda: engine.recall("big", queries[0]))
            qv = RandomEmbedder().encode(queries[:1])[0]
            matrix = _floor_matrix(engine.store)
            pools, recall, searching, after = [], [], [], []
            for q in queries[1:]:
                recall.append(_ms(lambda q=q: pools.append(engine.recall("big", q))))
                searching.append(recall[-1] - pools[-1].timings_ms["embed"])  # the stand-in embedder's hashing is no recall cost
                after.append(_ms(lambda: matrix @ qv))
            scan = statistics.median(p.timings_ms["dense"] for p in pools)
            session_steps = statistics.median(p.timings_ms["sessions"] + p.timings_ms["rank_sessions"] for p in pools)
            deepening = [_ms(lambda p=p: deepen(p, MAX_ROUTE_DEPTH)) for p in pools[: QUERIES // 2]]
            pool = pools[0]
            deep = deepen(pool, MAX_ROUTE_DEPTH)
            del pools[1:]  # the app holds one query's pool at a time
            rss = _rss_mb()
            slider = {k: statistics.median(_ms(lambda k=k: rerank(deep, replace(Config(), top_k=k)).results)
                                           for _ in range(15)) for k in (4, 50)}
            floor = statistics.median(_ms(lambda: matrix @ qv) for _ in range(15))
        finally:
            engine.close()
        without = _without_sessions(location, queries)
    median, bare = statistics.median(recall), statistics.median(searching)
    return {"chunks": n, "users": listed, "write_s": round(write_s, 3), "open_s": round(open_s, 4),
            "first_recall_ms": round(first, 1), "recall_median_ms": round(median, 2),
            "recall_p95_ms": round(_p95(recall), 2), "recall_no_embed_median_ms": round(bare, 2),
            "recall_no_embed_p95_ms": round(_p95(searching), 2), "pool_rows": pool.size, "depth": pool.depth,
            "deepen_max_median_ms": round(statistics.median(deepening), 2), "deepen_max_p95_ms": round(_p95(deepening), 2),
            "max_depth": MAX_ROUTE_DEPTH, "max_pool_rows": deep.size,
            "rerank_top4_ms": round(slider[4], 2), "rerank_top50_ms": round(slider[50], 2),
            "floor_ms": round(floor, 4), "ratio": round(bare / floor, 2),
            "floor_after_recall_ms": round(statistics.median(after), 4),
            "ratio_after_recall": round(bare / statistics.median(after), 2), "scan_median_ms": round(scan, 4),
            "rss_mb": round(rss),
            "recall_no_sessions_median_ms": round(without, 2), "session_routes_ratio": round(bare / without, 2),
            "session_steps_median_ms": round(session_steps, 2)}


def _without_sessions(location: Path, queries: list[str]) -> float:
    """Median ms of the same recalls (no query embedding) with the session routes off (SPEC §15)."""
    engine = Engine(location, embedder=RandomEmbedder(), session_routes=False)
    try:
        engine.recall("big", queries[0])
        times = []
        for q in queries[1:]:
            ms = _ms(lambda q=q: times.append(engine.recall("big", q).timings_ms["embed"]))
            times[-1] = ms - times[-1]
        return statistics.median(times)
    finally:
        engine.close()


def _p95(values: list[float]) -> float:
    return float(np.percentile(values, 95))


def print_row(r: dict[str, Any]) -> None:
    print(f"{r['chunks']:>7} chunks, {r['users']} users: write {r['write_s']:.1f} s, open {r['open_s'] * 1e3:.0f} ms, "
          f"first recall {r['first_recall_ms']:.0f} ms; recall (lists {r['depth']} deep, {r['pool_rows']} pool rows) "
          f"median {r['recall_median_ms']:.1f} ms (p95 {r['recall_p95_ms']:.1f}), without query embedding "
          f"{r['recall_no_embed_median_ms']:.2f} ms (p95 {r['recall_no_embed_p95_ms']:.2f}), floor {r['floor_ms']:.2f} ms "
          f"back to back ({r['ratio']:.2f}x), {r['floor_after_recall_ms']:.2f} ms right after each recall "
          f"({r['ratio_after_recall']:.2f}x; recall's own scan {r['scan_median_ms']:.2f} ms); deepening to {r['max_depth']} ({r['max_pool_rows']} rows) median "
          f"{r['deepen_max_median_ms']:.1f} ms (p95 {r['deepen_max_p95_ms']:.1f}), recall + deepening "
          f"{(r['recall_no_embed_median_ms'] + r['deepen_max_median_ms']) / r['floor_ms']:.1f}x the floor; slider re-rank "
          f"top 4 {r['rerank_top4_ms']:.1f} ms, top 50 {r['rerank_top50_ms']:.1f} ms; RSS {r['rss_mb']} MB; "
          f"recall without query embedding with the session routes off {r['recall_no_sessions_median_ms']:.2f} ms, "
          f"on {r['recall_no_embed_median_ms']:.2f} ms ({r['session_routes_ratio']:.2f}x; the session routes' own steps "
          f"{r['session_steps_median_ms']:.2f} ms of each recall)", flush=True)
