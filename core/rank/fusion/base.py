"""What every fusion scheme shares: the route columns, the live mask, RRF shares, min-max.

A scheme (one module of this package) is `fuse(ranks, scores, live, cfg, chunks=()) ->
(fused, contributions)` over the rows of a recall pool, and optionally `cut(fused, ranks,
live, cfg, chunks) -> {row: reason}`:
- `ranks`  int (n, 8), 1-based, 0 = absent;  `scores` float (n, 8) raw route scores;
- `live`   bool (n, 8): the route found the row within `route_limit` and has a weight > 0
  (a weight of 0 removes that route's list entirely: its rows do not enter the pool);
- `chunks` the pool's chunks, row for row (schemes that score chunk fields need them);
- `fuse` returns the fused score (n,) and each route's share of it (n, 8);
- `cut` names the found rows it removes before the candidate pool is formed, with the
  reason (§9: Memory v2's 0.15 cut and 10-result cap, Phase 7's storage filter).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from core.config import Config
from core.records import ROUTES, Chunk

Fusion = Callable[..., tuple[np.ndarray, np.ndarray]]
Cut = Callable[[np.ndarray, np.ndarray, np.ndarray, Config, Sequence[Chunk]], dict[int, str]]

LEXICAL = ROUTES.index("lexical")
VEC_FULL = ROUTES.index("vec_full")


def weights_of(cfg: Config) -> np.ndarray:
    return np.array([cfg.weight(r) for r in ROUTES], dtype=np.float64)


def live_mask(ranks: np.ndarray, cfg: Config) -> np.ndarray:
    """A route counts for a row when it ranked it within route_limit and weighs more than 0."""
    return (ranks > 0) & (ranks <= cfg.route_limit) & (weights_of(cfg) > 0)[None, :]


def rrf_contributions(ranks: np.ndarray, live: np.ndarray, weights: np.ndarray, k: float) -> np.ndarray:
    """`w_r / (k + rank_r(c))` for each live (row, route); 0 elsewhere (SPEC §3)."""
    safe = np.where(live, ranks, 1).astype(np.float64)
    return np.where(live, weights[None, :] / (k + safe), 0.0)


def route_sum(contributions: np.ndarray) -> np.ndarray:
    """Each row's contributions added route by route, left to right (SPEC §3's sum, in ROUTES
    order): the same float result whatever the array's memory layout, and the same as adding
    them one at a time (`core.rank.naive`). numpy's `sum(axis=1)` adds in a layout-dependent
    order, which moved final scores across a 6th-decimal rounding edge."""
    out = np.zeros(contributions.shape[0])
    for j in range(contributions.shape[1]):
        out += contributions[:, j]
    return out


def minmax(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Min-max normalise the present values to [0, 1] (all equal -> 1); absent -> 0."""
    if not present.any():
        return np.zeros_like(values)
    lo, hi = values[present].min(), values[present].max()
    span = hi - lo
    norm = (values - lo) / span if span > 0 else np.ones_like(values)
    return np.where(present, norm, 0.0)
