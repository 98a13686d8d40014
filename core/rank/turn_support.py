"""Session-first hybrid: turn chunks in the pool lend support to their sessions (SPEC §4).

`turn_support = min(cap, factor · best_turn_rrf_score)` over the session's turn chunks in
the pool; a session row's `rrf_score` becomes `session_rrf_score + turn_support`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class SessionSupport(NamedTuple):
    """What the pool's turn chunks say about one session."""

    supporting_turn_count: int
    best_turn_row: int  # pool-universe row of the best turn
    best_turn_rrf_score: float


def supports(pool_rows: np.ndarray, is_turn: np.ndarray, session_of: np.ndarray, fused: np.ndarray) -> dict[int, SessionSupport]:
    """Per session code: supporting turn count and best turn (highest rrf, then lowest id).

    `pool_rows` are in pool order (fused descending, ties by id), so the first turn seen
    for a session is its best.
    """
    turns = pool_rows[is_turn[pool_rows]]
    sessions, first, counts = np.unique(session_of[turns], return_index=True, return_counts=True)
    best = turns[first]
    return {s: SessionSupport(n, b, f) for s, n, b, f in
            zip(sessions.tolist(), counts.tolist(), best.tolist(), fused[best].tolist())}


def turn_support(best_turn_rrf_score: float, cap: float, factor: float) -> float:
    """`min(cap, factor · best_turn_rrf_score)`; Memsense cap 0.12, factor 0.6."""
    return min(cap, factor * best_turn_rrf_score)
