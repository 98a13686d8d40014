"""The cached result of one recall: every route's ranked list as arrays (SPEC §2).

Recall is slow (embedding, vector search, BM25) and runs once per query; everything after it
is a pure function of a `RecallPool` and a `Config` (see `core.rank.rerank`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from core.rank.score import clamp01
from core.records import ROUTES, Chunk


@dataclass(frozen=True, eq=False)
class RecallPool:
    """Every chunk any route found (to `depth`), plus the session chunks of touched sessions.

    Row i of every array describes `chunks[i]`; rows are sorted by memory_id so that
    "ties by id" is "ties by row index" everywhere downstream.
    """

    query: str
    user_id: str
    chunks: tuple[Chunk, ...]
    ranks: np.ndarray  # int32 (n, 8): 1-based rank in each route's list, 0 = absent
    scores: np.ndarray  # float64 (n, 8): raw route score (cosine or BM25), nan = absent
    vectors: np.ndarray  # float64 (n, d): unit vec_full vectors, zero rows where missing
    depth: int  # how deep every route list was kept
    neighbors: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """memory_id -> (previous, next) memory_id of the same session and kind (§4)."""
    neighbor_chunks: dict[str, Chunk] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    tie_order: str = "memory_id"
    """What the row order is, so what breaks ties: "memory_id", or the order a source's own
    database gave (a live Memsense: its pool order, see core.recall.postgres)."""

    def __post_init__(self) -> None:
        ids = [c.memory_id for c in self.chunks]
        if self.tie_order == "memory_id" and ids != sorted(ids):
            raise ValueError("RecallPool.chunks must be sorted by memory_id")
        n = len(self.chunks)
        if self.ranks.shape != (n, len(ROUTES)) or self.scores.shape != (n, len(ROUTES)):
            raise ValueError("ranks and scores must be (n_chunks, 8)")
        if self.vectors.shape[0] != n:
            raise ValueError("one vector row per chunk")

    @property
    def size(self) -> int:
        return len(self.chunks)

    @property
    def ids(self) -> list[str]:
        return [c.memory_id for c in self.chunks]

    def index_of(self, memory_id: str) -> int | None:
        return self._id_index.get(memory_id)

    @cached_property
    def _id_index(self) -> dict[str, int]:
        return {c.memory_id: i for i, c in enumerate(self.chunks)}

    @cached_property
    def static(self) -> "PoolArrays":
        """Per-row arrays that no knob changes, computed once per pool."""
        sessions = [c.session_id for c in self.chunks]
        codes = {s: i for i, s in enumerate(sorted(set(sessions)))}
        return PoolArrays(
            is_turn=np.array([c.kind == "turn" for c in self.chunks], dtype=bool),
            session_of=np.array([codes[s] for s in sessions], dtype=np.int64),
            memory_score=np.array([clamp01(c.memory_score) for c in self.chunks]),
            dims=np.where(np.abs(self.vectors).sum(axis=1) > 0, self.vectors.shape[1], 0),
        )


@dataclass(frozen=True, eq=False)
class PoolArrays:
    is_turn: np.ndarray  # bool (n,)
    session_of: np.ndarray  # int (n,) session code
    memory_score: np.ndarray  # clamp01(memory_score) (n,)
    dims: np.ndarray  # vector dimension, 0 = no vector (n,)


def unit_rows(vectors: Sequence[Sequence[float] | None], dim: int | None = None) -> tuple[np.ndarray, np.ndarray]:
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
