"""Recall pools of one query at any depth, from its exact route scores (SPEC §2).

The embedded store scans every vector of the user for each query (`EmbeddedStore.scan`), and
BM25 scores every chunk, so the query's full per-route scores are at hand after a recall
(a few MB). `ScanPools` keeps them: a pool of any depth is ranked from them when first asked
for (`core.recall.pool.deepen`, an explicit step), and a pool already ranked deeper is cut,
with no new search. What all queries keep is bounded (`SCORES_HELD_BYTES`): past it, the least
recently used keep only the rows their deepest lists can hold.
Either way the pool is the one a fresh recall at that depth gives: route lists are ranked by
`core.recall.ties` (the same tie rules, the same noise grouping), and a list `n`
deep is the first `n` of any deeper list.
"""
from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Mapping, NamedTuple, Protocol, Sequence

import numpy as np

from core.config import MAX_ROUTE_DEPTH
from core.recall.pool import ChunkRows, PoolArrays, RecallPool, UnitRows
from core.recall.sessions import NO_ROWS, SessionIndex
from core.recall.store import RouteHits
from core.recall.ties import list_reach, ranked_rows, ranked_scores
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
                      depth=depth, neighbors=ix.neighbors, user_chunks=ix.by_id, timings_ms=dict(timings),
                      arrays=arrays, exact=source is not None, source=source)


SCORES_HELD_BYTES = 512 * 2 ** 20
"""What the exact scores and cached pools of every live `ScanPools` may hold together before the
least recently used are shrunk (`ScanPools.shrink`). Without a bound, 200 questions on a
100,000-chunk user, each recalled and read at its deepest ("why not", Diagnose), grew the
process by 2,287 MB; with it, by 589 MB (760 questions: 775 MB)."""


class ScanPools:
    """One query's exact scores on every route, and the pools ranked from them so far.

    Its scores and cached pools count against `SCORES_HELD_BYTES` with those of every other
    query (`HELD`): past it, the least recently used drop their cached pools and keep only the
    rows of each route a list `max_depth` deep can hold (`core.recall.ties.list_reach`), from
    which every pool is ranked exactly as from the full scores."""

    def __init__(self, ix: UserRows, user_id: str, query: str, dense: np.ndarray, lexical: np.ndarray,
                 timings: dict[str, float], max_depth: int = MAX_ROUTE_DEPTH,
                 sessions: SessionScores | None = None) -> None:
        """`dense`: float32 (7, n) cosine per dense route, -inf where the chunk has no vector;
        `lexical`: float64 (n,) BM25, 0 = no match; `sessions`: None when the session routes are off."""
        self.ix, self.user_id, self.query, self.timings = ix, user_id, query, timings
        self.max_depth, self.sessions = max_depth, sessions
        self._scores: tuple[np.ndarray, np.ndarray] | _Reach = (dense, lexical)
        self._whole_is_least = False
        self._fresh()

    def _fresh(self) -> None:
        self._lock = threading.Lock()
        self._deepest: RecallPool | None = None
        self._pools: OrderedDict[int, RecallPool] = OrderedDict()
        HELD.note(self, self._score_bytes(), used=True)

    def __getstate__(self) -> dict:
        """Pickled (a pool sent to another process) without its lock and cached pools."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_deepest", "_pools")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._fresh()

    @property
    def shrunk(self) -> bool:
        """Whether only the rows lists `max_depth` deep can hold are kept (`shrink`)."""
        return isinstance(self._scores, _Reach)

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
                pool = self._pools[depth]
            else:
                deeper = self._deepest if self._deepest is not None and self._deepest.depth >= depth else None
                pool = None
        if pool is not None:
            HELD.note(self, self.nbytes, used=True)
            return pool
        pool = self._cut(deeper, depth) if deeper is not None else self._rank(depth)
        with self._lock:
            if self._deepest is None or depth > self._deepest.depth:
                self._deepest = pool
            self._pools[depth] = pool
            while len(self._pools) > KEEP_POOLS:
                self._pools.popitem(last=False)
        HELD.note(self, self.nbytes, used=True)
        return pool

    @property
    def nbytes(self) -> int:
        """The bytes of the scores and of every cached pool (not counting the user's own arrays)."""
        with self._lock:
            pools = {id(p): p for p in (*self._pools.values(), self._deepest) if p is not None}
        return self._score_bytes() + sum(p.nbytes for p in pools.values())

    def _score_bytes(self) -> int:
        scores = self._scores
        return scores.nbytes if isinstance(scores, _Reach) else scores[0].nbytes + scores[1].nbytes

    def shrink(self) -> None:
        """Drop the cached pools and keep only the rows each route's list `max_depth` deep can
        hold: the same pools at every depth, a fraction of the memory on a large user."""
        with self._lock:
            self._deepest = None
            self._pools.clear()
        scores = self._scores
        if not isinstance(scores, _Reach) and not self._whole_is_least:
            reach = _Reach.of(*scores, self.max_depth)
            if reach.nbytes < self._score_bytes():
                self._scores = reach
            else:  # a small user: lists that deep reach most rows
                self._whole_is_least = True
        HELD.note(self, self._score_bytes(), used=False)

    def _rank(self, depth: int) -> RecallPool:
        t0 = time.perf_counter()
        scores = self._scores
        if isinstance(scores, _Reach):
            if depth > self.max_depth:
                raise ValueError(f"a pool {depth} deep from scores kept {self.max_depth} deep")
            hits = {r: scores.ranked(rows, values, depth) for r, (rows, values) in zip(DENSE_ROUTES, scores.dense)}
            t1 = time.perf_counter()
            hits["lexical"] = scores.ranked(*scores.lexical, depth, positive=True)
        else:
            hits = {r: RouteHits(*h) for r, h in zip(DENSE_ROUTES, ranked_rows(scores[0], depth))}
            t1 = time.perf_counter()
            hits["lexical"] = RouteHits(*ranked_scores(scores[1], depth, positive=True))  # BM25: no match is no hit
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


@dataclass(frozen=True)
class _Reach:
    """One query's route scores kept only on the rows lists `depth` deep can hold
    (`core.recall.ties.list_reach`): every other row is no hit."""

    dense: tuple[tuple[np.ndarray, np.ndarray], ...]  # each dense route's (rows, float32 scores)
    lexical: tuple[np.ndarray, np.ndarray]  # (rows, float64 BM25)

    @staticmethod
    def of(dense: np.ndarray, lexical: np.ndarray, depth: int) -> "_Reach":
        routes = [list_reach(row, depth) for row in dense]
        lexical_rows = list_reach(lexical, depth, positive=True)
        return _Reach(tuple((r.astype(np.int32), row[r]) for r, row in zip(routes, dense)),
                      (lexical_rows.astype(np.int32), lexical[lexical_rows]))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes + b.nbytes for a, b in (*self.dense, self.lexical))

    @staticmethod
    def ranked(rows: np.ndarray, values: np.ndarray, depth: int, positive: bool = False) -> RouteHits:
        """The route's list `depth` deep (at most the reach's), ranked from the kept rows alone:
        they rise, so ties by place among them are ties by row."""
        places, scores = ranked_scores(values, depth, positive)
        return RouteHits(rows[places].astype(np.int64), scores)


class _Held:
    """Every live `ScanPools` by recency of use, with the bytes it holds; past the budget, the
    least recently used are shrunk, one at a time, until the rest fit. One shrunk is not
    shrunk again until it is used. Entries of collected ones are dropped on the next note (a
    weakref callback only queues them: it may run inside any allocation, this class's own
    included)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._held: OrderedDict[int, tuple[weakref.ref, int, bool]] = OrderedDict()  # (ref, bytes, shrinkable)
        self._gone: list[tuple[int, weakref.ref]] = []
        self.total = 0
        self._shrinkable = 0  # how many entries are: with none, a trim has nothing to look for

    def note(self, pools: ScanPools, nbytes: int, used: bool) -> None:
        """`pools` now holds `nbytes`; `used`: it was just used (it becomes the most recent and
        may be shrunk again), else it was just shrunk."""
        key = id(pools)
        with self._lock:
            self._drop_gone()
            entry = self._held.get(key)
            if entry is None:
                ref = weakref.ref(pools, self._queue(key))
            else:
                ref = entry[0]
                self.total -= entry[1]
                self._shrinkable -= entry[2]
            self._held[key] = (ref, nbytes, used)
            self.total += nbytes
            self._shrinkable += used
            if used:
                self._held.move_to_end(key)
            over = self.total > self.budget
        if over and used:
            self._trim(pools)

    def _queue(self, key: int) -> Callable[[weakref.ref], None]:
        return lambda ref: self._gone.append((key, ref))

    def _drop_gone(self) -> None:
        while self._gone:
            key, ref = self._gone.pop()
            entry = self._held.get(key)
            if entry is not None and entry[0] is ref:
                del self._held[key]
                self.total -= entry[1]
                self._shrinkable -= entry[2]

    def _trim(self, keep: ScanPools) -> None:
        while True:
            with self._lock:
                self._drop_gone()
                if self.total <= self.budget or self._shrinkable <= 1:  # none, or only `keep`
                    return
                victim = next((p for ref, _, shrinkable in self._held.values()
                               if shrinkable and (p := ref()) is not None and p is not keep), None)
            if victim is None:
                return
            victim.shrink()


HELD = _Held(SCORES_HELD_BYTES)
