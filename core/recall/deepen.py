"""Recall pools of one query at any depth, from its exact route scores (SPEC §2).

The embedded store scans every vector of the user for each query (`EmbeddedStore.scan`), and
BM25 scores every chunk, so the query's full per-route scores are at hand after a recall
(a few MB). `ScanPools` keeps them: a pool of any depth is ranked from them when first asked
for (`core.recall.pool.deepen`, an explicit step), and a pool already ranked deeper is cut,
with no new search.
Either way the pool is the one a fresh recall at that depth gives: route lists are ranked by
`core.recall.ties` (the same tie rules, the same noise grouping), and a list `n`
deep is the first `n` of any deeper list.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Protocol, Sequence

import numpy as np

from core.config import MAX_ROUTE_DEPTH
from core.recall.pool import ChunkRows, PoolArrays, RecallPool, UnitRows
from core.recall.sessions import NO_ROWS, SessionIndex
from core.recall.store import RouteHits
from core.recall.ties import ranked_rows, ranked_scores
from core.records import DENSE_ROUTES, ROUTES, SESSION_ROUTES, Chunk

KEEP_POOLS = 6
"""Pools of other depths kept per query besides the deepest ranked (a slider moving back and
forth over a few depths re-uses them)."""


class UserRows(Protocol):
    """What a pool needs of one user's index (`core.recall.user_index.UserIndex`)."""

    chunks: Sequence[Chunk]
    vec_full: np.ndarray
    session_of: np.ndarray
    session_rows: list[np.ndarray]
    is_session: np.ndarray
    static: PoolArrays
    neighbors: Mapping[str, tuple[str | None, str | None]]
    by_id: Mapping[str, Chunk]


class SessionScores(NamedTuple):
    """One query's scores of every session on the session routes (`core.recall.sessions`)."""

    table: SessionIndex
    lexical: np.ndarray  # (documents,) BM25, 0 = no match
    dense: np.ndarray  # (documents,) aggregated cosine, -inf = no vector

    def hits(self, depth: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each session route's list `depth` sessions deep, as (rows, scores, ranks)."""
        return {"session_lexical": self.table.hits(self.lexical, depth, lexical=True),
                "session_dense": self.table.hits(self.dense, depth, lexical=False)}


def assemble(ix: UserRows, query: str, user_id: str, hits: dict[str, RouteHits], depth: int,
             timings: dict[str, float], source: "ScanPools | None" = None,
             sessions: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None) -> RecallPool:
    """The pool: every row some route found, plus the session chunks of every touched session.
    A chunk route's rank is the place in its list; a session route's (`sessions`: rows, scores,
    ranks) is its session's place, given to each of the session's session chunks (SPEC §15)."""
    n = len(ix.chunks)
    lists = {**{r: (hits[r].rows, hits[r].scores, None) for r in ROUTES if r not in SESSION_ROUTES},
             **{r: (sessions or {}).get(r, NO_ROWS) for r in SESSION_ROUTES}}
    lengths = [len(lists[r][0]) for r in ROUTES]
    found = np.concatenate([lists[r][0] for r in ROUTES]).astype(np.int64)  # every list, route after route
    keep = np.zeros(n, dtype=bool)
    keep[found] = True
    touched = np.zeros(len(ix.session_rows), dtype=bool)
    touched[ix.session_of[keep]] = True
    keep |= ix.is_session & touched[ix.session_of]
    rows = np.flatnonzero(keep)
    pos = np.zeros(n, dtype=np.int64)
    pos[rows] = np.arange(len(rows))
    at = pos[found], np.repeat(np.arange(len(ROUTES)), lengths)  # (pool row, route) of every list entry
    places = np.arange(1, max(lengths, default=0) + 1)
    ranks = np.zeros((len(rows), len(ROUTES)), dtype=np.int32)  # 1-based place in its route's list (a session's, for a session route)
    ranks[at] = np.concatenate([places[:m] if lists[r][2] is None else lists[r][2] for r, m in zip(ROUTES, lengths)])
    scores = np.full((len(rows), len(ROUTES)), np.nan)
    scores[at] = np.concatenate([lists[r][1] for r in ROUTES])
    return _pool(ix, query, user_id, rows, ranks, scores, depth, timings, source)


def _pool(ix: UserRows, query: str, user_id: str, rows: np.ndarray, ranks: np.ndarray, scores: np.ndarray,
          depth: int, timings: dict[str, float], source: "ScanPools | None") -> RecallPool:
    st = ix.static
    check = getattr(ix.chunks, "check", None)  # chunks decoded when first used: these rows checked now
    if check is not None:
        check(rows)
    arrays = PoolArrays(st.is_turn[rows], st.session_of[rows], st.memory_score[rows], st.dims[rows])
    return RecallPool(query, user_id, ChunkRows(ix.chunks, rows), ranks, scores, UnitRows(ix.vec_full, rows),
                      depth=depth, neighbors=ix.neighbors, neighbor_chunks=ix.by_id, timings_ms=dict(timings),
                      arrays=arrays, exact=source is not None, source=source)


@dataclass(eq=False)
class ScanPools:
    """One query's exact scores on every route, and the pools ranked from them so far."""

    ix: UserRows
    user_id: str
    query: str
    dense: np.ndarray  # float32 (7, n) cosine per dense route, -inf where the chunk has no vector
    lexical: np.ndarray  # float64 (n,) BM25, 0 = no match
    timings: dict[str, float]
    max_depth: int = MAX_ROUTE_DEPTH
    sessions: SessionScores | None = None  # None: the session routes are off

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._deepest: RecallPool | None = None
        self._pools: OrderedDict[int, RecallPool] = OrderedDict()

    def __getstate__(self) -> dict:
        """Pickled (a pool sent to another process) without its lock and cached pools."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_deepest", "_pools")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    def ready(self, depth: int) -> bool:
        with self._lock:
            return depth in self._pools or (self._deepest is not None and self._deepest.depth >= depth)

    def pool(self, depth: int) -> RecallPool:
        """The pool `depth` deep: cached, cut from a deeper one, or ranked from the scores.
        Ranking happens outside the lock, so a reader of a ready depth never waits for it."""
        depth = max(int(depth), 1)
        with self._lock:
            if depth in self._pools:
                self._pools.move_to_end(depth)
                return self._pools[depth]
            deeper = self._deepest if self._deepest is not None and self._deepest.depth >= depth else None
        pool = self._cut(deeper, depth) if deeper is not None else self._rank(depth)
        with self._lock:
            if self._deepest is None or depth > self._deepest.depth:
                self._deepest = pool
            self._pools[depth] = pool
            while len(self._pools) > KEEP_POOLS:
                self._pools.popitem(last=False)
        return pool

    def _rank(self, depth: int) -> RecallPool:
        t0 = time.perf_counter()
        hits = {r: RouteHits(*h) for r, h in zip(DENSE_ROUTES, ranked_rows(self.dense, depth))}
        t1 = time.perf_counter()
        hits["lexical"] = RouteHits(*ranked_scores(self.lexical, depth, positive=True))  # BM25: no match is no hit
        t2 = time.perf_counter()
        session_lists = self.sessions.hits(depth) if self.sessions is not None else None
        t3 = time.perf_counter()
        timings = {**self.timings, "rank_dense": (t1 - t0) * 1e3, "rank_lexical": (t2 - t1) * 1e3,
                   "rank_sessions": (t3 - t2) * 1e3}
        pool = assemble(self.ix, self.query, self.user_id, hits, depth, timings, self, session_lists)
        timings["assemble"] = (time.perf_counter() - t3) * 1e3
        pool.timings_ms.update(timings)
        return pool

    def _cut(self, deeper: RecallPool, depth: int) -> RecallPool:
        """The first `depth` of every list of a deeper pool (`RecallPool.cut`)."""
        return deeper.cut(depth)
