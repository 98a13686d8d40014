"""The cached result of one recall: every route's ranked list as arrays (SPEC §2).

Recall is slow (embedding, vector search, BM25) and runs once per query; everything after it
is a pure function of a `RecallPool` and a `Config` (see `core.rank.rerank`).

A pool is as deep as it was asked for, and says so (`depth`). Re-ranking under a config takes
the pool at the config's `route_limit` (`at_depth`): a deeper pool is cut to it, a pure array
operation; a shallower one is refused (`PoolTooShallow`), never searched again. Deepening is
an explicit step: a pool from the embedded engine keeps a reference to its query's exact route
scores (`source`), and `deepen(pool, depth)` ranks deeper lists from them with no new search;
pools that cannot (replayed Memsense rows, a live Memsense) have the fixed depth they were made with.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator, Mapping, Protocol, Sequence

import numpy as np

from core.errors import MemsenseError
from core.records import MEMSENSE_ROUTES, ROUTES, Chunk, clamp01

KEEP_CUTS = 6
"""Cuts of a pool kept with it (a slider moving over a few route limits re-uses them)."""


class PoolTooShallow(MemsenseError):
    """A re-rank asked a pool for route lists deeper than recall kept (`RecallPool.at_depth`)."""


@dataclass(frozen=True, eq=False)
class RecallPool:
    """Every chunk any route found (to `depth`), plus the session chunks of touched sessions.

    Row i of every array describes `chunks[i]`; rows are sorted by memory_id so that
    "ties by id" is "ties by row index" everywhere downstream.
    """

    query: str
    user_id: str
    chunks: Sequence[Chunk]  # a tuple, or `ChunkRows` (the user's chunks, read when indexed)
    ranks: np.ndarray  # int32 (n, routes): 1-based rank in each route's list, 0 = absent
    scores: np.ndarray  # float64 (n, routes): raw route score (cosine or BM25), nan = absent
    vectors: "np.ndarray | UnitRows"  # float64 (n, d): unit vec_full vectors, zero rows where missing
    depth: int  # how deep every route list was kept
    neighbors: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """memory_id -> (previous, next) memory_id of the same session and kind (§4)."""
    user_chunks: Mapping[str, Chunk] = field(default_factory=dict)
    """memory_id -> every chunk of the user (session and turn chunks, in or out of this pool): what turn
    support's neighbours and a diagnose's gold sessions are looked up in."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    tie_order: str = "memory_id"
    """What the row order is, so what breaks ties: "memory_id", or the order a source's own
    database gave (a live Memsense: its pool order, see core.recall.memsense.database)."""
    arrays: "PoolArrays | None" = field(default=None, repr=False)
    """`static`, when the maker has it at hand (the engine indexes its per-user arrays)."""
    exact: bool = False
    """Whether the route lists were ranked from the query's exact scores (`core.recall.ties`),
    so a list `n` deep is the first `n` of this pool's: a shallower pool is then this one's cut
    (`at_depth`). A database's own lists (a live Memsense, a Qdrant server) serve a shallower
    depth whole, as made."""
    source: "Deepener | None" = field(default=None, repr=False)
    """Where this query's deeper pools come from, for an explicit `deepen`; None: the depth is
    fixed. Re-ranking never reads it."""

    def __post_init__(self) -> None:
        if isinstance(self.chunks, ChunkRows):  # the user's chunks are sorted: rows must rise
            if len(self.chunks.rows) > 1 and not (np.diff(self.chunks.rows) > 0).all():
                raise ValueError("RecallPool.chunks must be sorted by memory_id")
        else:
            ids = [c.memory_id for c in self.chunks]
            if self.tie_order == "memory_id" and ids != sorted(ids):
                raise ValueError("RecallPool.chunks must be sorted by memory_id")
        n = len(self.chunks)
        if self.ranks.ndim == 2 and self.ranks.shape[1] == len(MEMSENSE_ROUTES) < len(ROUTES):
            object.__setattr__(self, "ranks", _widen(self.ranks, 0))  # Memsense's eight: no session route found it
            object.__setattr__(self, "scores", _widen(self.scores, np.nan))
        if self.ranks.shape != (n, len(ROUTES)) or self.scores.shape != (n, len(ROUTES)):
            raise ValueError(f"ranks and scores must be (n_chunks, {len(ROUTES)})")
        if self.vectors.shape[0] != n:
            raise ValueError("one vector row per chunk")

    @property
    def size(self) -> int:
        return len(self.chunks)

    @property
    def nbytes(self) -> int:
        """The bytes of this pool's own arrays and of the cuts kept with it (the user's chunks
        and vectors it reads by row are not its own)."""
        own = [self.ranks, self.scores]
        if self.arrays is not None:
            own += [self.arrays.is_turn, self.arrays.session_of, self.arrays.memory_score, self.arrays.dims]
        if isinstance(self.chunks, ChunkRows):
            own.append(self.chunks.rows)
        own.append(self.vectors.rows if isinstance(self.vectors, UnitRows) else self.vectors)
        cuts = self.__dict__.get("_cuts", {})
        return sum(a.nbytes for a in own) + sum(c.nbytes for c in list(cuts.values()))

    @cached_property
    def ids(self) -> tuple[str, ...]:
        """Every row's memory_id, in row order (read from the user's id list when the rows index
        one: a deepened pool of a large user has tens of thousands of rows, 40-60 ms through its chunks)."""
        chunks = self.chunks
        known = chunks.memory_ids() if isinstance(chunks, ChunkRows) else None
        return tuple(known if known is not None else (c.memory_id for c in chunks))

    def index_of(self, memory_id: str) -> int | None:
        return self._id_index.get(memory_id)

    @cached_property
    def _id_index(self) -> dict[str, int]:
        return dict(zip(self.ids, range(len(self.ids))))  # a memory_id on two rows: the last, as before

    @property
    def exhausted(self) -> bool:
        """Whether every route list ended before the pool's depth: it then holds every hit."""
        return int(self.ranks.max(initial=0)) < self.depth

    @property
    def max_depth(self) -> int:
        """The deepest this query's pool can be made (`deepen`): its source's reach, else its own depth."""
        return self.depth if self.source is None else max(self.depth, self.source.max_depth)

    def serves(self, depth: int) -> bool:
        """Whether a re-rank `depth` deep can read this pool (`at_depth` does not refuse)."""
        return depth <= self.depth or self.exhausted

    def at_depth(self, depth: int) -> "RecallPool":
        """The pool a recall keeping every route list `depth` deep gives, from this one alone
        (SPEC §2): itself at its own depth; deeper, itself when its lists ended before its depth
        (they hold every hit), else `PoolTooShallow`; shallower, its cut when its lists are
        `exact`, else itself. A pure function of the pool: nothing is searched or ranked."""
        depth = int(depth)
        if depth == self.depth:
            return self
        if depth > self.depth:
            if self.exhausted:
                return self
            raise PoolTooShallow(
                f"the recall pool keeps route lists {self.depth} deep but these settings need {depth} "
                f"(route_limit); recall the query {depth} deep, or deepen the pool first, then re-rank")
        if not self.exact or depth < 1:
            return self
        cuts: OrderedDict[int, RecallPool] = self.__dict__.setdefault("_cuts", OrderedDict())
        pool = cuts.get(depth)
        if pool is None:
            pool = cuts[depth] = self.cut(depth)
            while len(cuts) > KEEP_CUTS:
                try:
                    cuts.popitem(last=False)
                except KeyError:  # another thread trimmed it
                    break
        return pool

    def cut(self, depth: int) -> "RecallPool":
        """The first `depth` of every route list: the rows those lists found, plus the session
        chunks of every session they touch (this pool holds the session chunks of every session
        its deeper lists touch, so of every session the shorter ones touch). Rows keep their order."""
        t0 = time.perf_counter()
        inside = (self.ranks > 0) & (self.ranks <= depth)
        found = inside.any(axis=1)
        st = self.static
        touched = np.zeros(int(st.session_of.max(initial=-1)) + 1, dtype=bool)
        touched[st.session_of[found]] = True
        keep = np.flatnonzero(found | (~st.is_turn & touched[st.session_of]))
        chunks: Sequence[Chunk]
        if isinstance(self.chunks, ChunkRows):
            chunks = self.chunks.take(keep)
        else:
            chunks = tuple(self.chunks[i] for i in keep.tolist())
        vectors = self.vectors.take(keep) if isinstance(self.vectors, UnitRows) else self.vectors[keep]
        timings = {**self.timings_ms, "cut": (time.perf_counter() - t0) * 1e3}
        return RecallPool(self.query, self.user_id, chunks, np.where(inside[keep], self.ranks[keep], 0).astype(np.int32),
                          np.where(inside[keep], self.scores[keep], np.nan), vectors, depth=depth,
                          neighbors=self.neighbors, user_chunks=self.user_chunks, timings_ms=timings,
                          tie_order=self.tie_order, arrays=st.take(keep), exact=self.exact, source=self.source)

    def ready(self, depth: int) -> bool:
        """Whether `deepen(self, depth)` is quick: no route list has to be ranked deeper than before."""
        return self.serves(depth) or (self.source is not None and self.source.ready(depth))

    def __getstate__(self) -> dict:
        """Pickled (a pool sent to another process) without its cuts."""
        return {k: v for k, v in self.__dict__.items() if k != "_cuts"}

    @cached_property
    def static(self) -> "PoolArrays":
        """Per-row arrays that no knob changes, computed once per pool."""
        if self.arrays is not None:
            return self.arrays
        sessions = [c.session_id for c in self.chunks]
        codes = {s: i for i, s in enumerate(sorted(set(sessions)))}
        return PoolArrays(
            is_turn=np.array([c.kind == "turn" for c in self.chunks], dtype=bool),
            session_of=np.array([codes[s] for s in sessions], dtype=np.int64),
            memory_score=np.array([clamp01(c.memory_score) for c in self.chunks]),
            dims=np.where(np.abs(self.vectors).sum(axis=1) > 0, self.vectors.shape[1], 0),
        )


def deepen(pool: RecallPool, depth: int) -> RecallPool:
    """This query's pool `depth` deep: the explicit deepening step, called by whoever needs
    deeper lists (a re-rank never does). A pool with a `source` ranks deeper lists from its
    query's cached exact route scores, with no new search (on large users, a noticeable wait:
    keep it off a UI thread); any pool serves what `at_depth` serves; else `PoolTooShallow`."""
    if pool.source is not None and not pool.serves(depth):
        return pool.source.pool(min(int(depth), pool.source.max_depth))
    return pool.at_depth(depth)


def deepest(pool: RecallPool) -> RecallPool:
    """This query's pool at the deepest depth it can reach ("why not" on chunks a shallow pool
    does not hold reads it); a fixed pool is its own deepest."""
    return deepen(pool, pool.max_depth)


class Deepener(Protocol):
    """Pools of one query at any depth, cut from its cached exact route scores."""

    max_depth: int

    def pool(self, depth: int) -> RecallPool:
        """The pool `depth` deep (identical to a fresh recall at that depth)."""

    def ready(self, depth: int) -> bool:
        """Whether `pool(depth)` needs no list ranked deeper than before."""


class ChunkRows(Sequence[Chunk]):
    """The pool rows' chunks as rows of the user's chunk list: no tuple of tens of thousands
    of chunks is built for a pool whose re-rank reads a few hundred of them."""

    __slots__ = ("_all", "rows")

    def __init__(self, chunks: Sequence[Chunk], rows: np.ndarray):
        self._all, self.rows = chunks, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self._all[r] for r in self.rows[i].tolist())
        return self._all[int(self.rows[i])]

    def __iter__(self) -> Iterator[Chunk]:
        return map(self._all.__getitem__, self.rows.tolist())

    def memory_ids(self) -> list[str] | None:
        """The rows' memory ids, read from the user's id list (`memory_ids` of a store's chunk
        list, in row order) with no chunk decoded; None when the user's chunks have no such list."""
        known = getattr(self._all, "memory_ids", None)
        return None if known is None else list(map(known.__getitem__, self.rows.tolist()))

    def take(self, keep: np.ndarray) -> "ChunkRows":
        """The rows at positions `keep`, as rows of the same user's chunks."""
        return ChunkRows(self._all, self.rows[keep])

    @property
    def user_chunks(self) -> Sequence[Chunk]:
        """The user's chunk list these rows index."""
        return self._all

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]


class UnitRows:
    """(n, d) float64 unit vectors of the pool rows, converted from the store's float32 rows
    only for the rows read (`vectors[idx]`): a re-rank reads the few hundred MMR sees."""

    __slots__ = ("_matrix", "rows", "shape")
    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, matrix: np.ndarray, rows: np.ndarray):
        self._matrix, self.rows = matrix, rows
        self.shape = (len(rows), matrix.shape[1])

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, idx) -> np.ndarray:
        out = self._matrix[self.rows[idx]].astype(np.float64)
        if out.ndim == 1:
            return _unit(out[None, :])[0]
        return _unit(out)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[np.arange(self.shape[0])]
        return out if dtype is None else out.astype(dtype)

    def tolist(self) -> list:
        return np.asarray(self).tolist()

    def take(self, keep: np.ndarray) -> "UnitRows":
        """The rows at positions `keep`, still read on use."""
        return UnitRows(self._matrix, self.rows[keep])

    @property
    def matrix(self) -> np.ndarray:
        """The user's vectors these rows index (as stored: not yet unit, nor float64)."""
        return self._matrix


def _widen(matrix: np.ndarray, empty: float) -> np.ndarray:
    """Columns of Memsense's eight routes, with the session routes' columns added empty."""
    out = np.full((matrix.shape[0], len(ROUTES)), empty, dtype=matrix.dtype)
    out[:, : matrix.shape[1]] = matrix
    return out


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 in float64 (zero rows stay zero), in place."""
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))[:, None]
    return np.divide(vectors, norms, out=vectors, where=norms > 0)


@dataclass(frozen=True, eq=False)
class PoolArrays:
    is_turn: np.ndarray  # bool (n,)
    session_of: np.ndarray  # int (n,) session code
    memory_score: np.ndarray  # clamp01(memory_score) (n,)
    dims: np.ndarray  # vector dimension, 0 = no vector (n,)

    def take(self, keep: np.ndarray) -> "PoolArrays":
        """The rows at positions `keep`."""
        return PoolArrays(self.is_turn[keep], self.session_of[keep], self.memory_score[keep], self.dims[keep])


def unit_rows(vectors: Sequence[Sequence[float] | np.ndarray | None], dim: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stack vectors into unit rows, zero-padded to the widest; returns (matrix, dims).

    A missing or zero vector becomes a zero row with dim 0: cosine with it is 0 (§5).
    """
    dims = np.array([0 if v is None else len(v) for v in vectors], dtype=np.int32)
    width = dim if dim is not None else int(dims.max(initial=0))
    out = np.zeros((len(vectors), max(width, 1)), dtype=np.float64)
    for i, v in enumerate(vectors):
        if v is not None and len(v):
            out[i, : len(v)] = v
    norms = np.linalg.norm(out, axis=1)
    dims[norms == 0] = 0
    nz = norms > 0
    out[nz] /= norms[nz, None]
    return out, dims


def neighbors_of(chunks: Sequence[Chunk]) -> dict[str, tuple[str | None, str | None]]:
    """memory_id -> (previous, next) memory_id of the same session and kind, in time order (§4)."""
    groups: dict[tuple[str, str], list[Chunk]] = {}
    for c in chunks:
        groups.setdefault((c.session_id, c.kind), []).append(c)
    out = {}
    for group in groups.values():
        group.sort(key=lambda c: (c.time, c.order))
        for k, c in enumerate(group):
            out[c.memory_id] = (group[k - 1].memory_id if k else None,
                                group[k + 1].memory_id if k + 1 < len(group) else None)
    return out
