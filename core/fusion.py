"""Fusion: transform each route's ranks (or raw scores) to scores, then combine (SPEC §3, §9).

Every scheme is a function `(ranks, scores, live, cfg, chunks=()) -> (fused, contributions)`
over the rows of a recall pool, picked from `FUSIONS` by `Config.scheme`:
- `ranks`  int (n, 8), 1-based, 0 = absent;  `scores` float (n, 8) raw route scores;
- `live`   bool (n, 8): the route found the row within `route_limit` and has a weight > 0
  (a weight of 0 removes that route's list entirely: its rows do not enter the pool);
- `chunks` the pool's chunks, row for row (schemes that score chunk fields need them);
- returns the fused score (n,) and each route's share of it (n, 8).

A scheme may also register a score cut in `CUTS` (`@score_cut(name)`): a function
`(fused, ranks, live, cfg, chunks) -> {row: reason}` naming the found rows it removes before
the candidate pool is formed (§9: Memory v2's 0.15 cut and 10-result cap, Phase 7's storage
filter). Schemes with no cut (rrf, top_rank_bonus) remove nothing.
The §9 schemes beyond RRF live in `core.schemes`, which registers itself on import.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from core.config import Config
from core.types import ROUTES, Chunk

Fusion = Callable[..., tuple[np.ndarray, np.ndarray]]
FUSIONS: dict[str, Fusion] = {}
Cut = Callable[[np.ndarray, np.ndarray, np.ndarray, Config, Sequence[Chunk]], dict[int, str]]
CUTS: dict[str, Cut] = {}

LEXICAL = ROUTES.index("lexical")
VEC_FULL = ROUTES.index("vec_full")


def fusion(name: str) -> Callable[[Fusion], Fusion]:
    def register(fn: Fusion) -> Fusion:
        FUSIONS[name] = fn
        return fn

    return register


def score_cut(name: str) -> Callable[[Cut], Cut]:
    def register(fn: Cut) -> Cut:
        CUTS[name] = fn
        return fn

    return register


def cut_rows(fused: np.ndarray, ranks: np.ndarray, live: np.ndarray, cfg: Config,
             chunks: Sequence[Chunk]) -> dict[int, str]:
    """Rows the scheme's score cut removes, with the reason; {} when the scheme has none."""
    cut = CUTS.get(cfg.scheme)
    return cut(fused, ranks, live, cfg, chunks) if cut else {}


def weights_of(cfg: Config) -> np.ndarray:
    return np.array([cfg.weight(r) for r in ROUTES], dtype=np.float64)


def live_mask(ranks: np.ndarray, cfg: Config) -> np.ndarray:
    """A route counts for a row when it ranked it within route_limit and weighs more than 0."""
    return (ranks > 0) & (ranks <= cfg.route_limit) & (weights_of(cfg) > 0)[None, :]


def rrf_contributions(ranks: np.ndarray, live: np.ndarray, weights: np.ndarray, k: float) -> np.ndarray:
    """`w_r / (k + rank_r(c))` for each live (row, route); 0 elsewhere (SPEC §3)."""
    safe = np.where(live, ranks, 1).astype(np.float64)
    return np.where(live, weights[None, :] / (k + safe), 0.0)


@fusion("rrf")
def rrf(ranks: np.ndarray, scores: np.ndarray, live: np.ndarray, cfg: Config,
        chunks: Sequence[Chunk] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal Rank Fusion: `rrf(c) = Σ_r w_r / (k + rank_r(c))`; Memsense k = 15, w = 1."""
    contrib = rrf_contributions(ranks, live, weights_of(cfg), cfg.rrf_k)
    return contrib.sum(axis=1), contrib


@fusion("top_rank_bonus")
def top_rank_bonus(ranks: np.ndarray, scores: np.ndarray, live: np.ndarray, cfg: Config,
                   chunks: Sequence[Chunk] = ()) -> tuple[np.ndarray, np.ndarray]:
    """RRF plus the QMD bonus (SPEC §9): +bonus_first when ranked 1st in any live route,
    else +bonus_top3 when ranked 2nd or 3rd in any. The bonus is reported on the best route."""
    fused, contrib = rrf(ranks, scores, live, cfg)
    best = np.where(live, ranks, np.iinfo(np.int32).max).min(axis=1)
    bonus = np.where(best == 1, cfg.bonus_first, np.where(best <= 3, cfg.bonus_top3, 0.0))
    return fused + bonus, contrib


def minmax(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Min-max normalise the present values to [0, 1] (all equal -> 1); absent -> 0."""
    if not present.any():
        return np.zeros_like(values)
    lo, hi = values[present].min(), values[present].max()
    span = hi - lo
    norm = (values - lo) / span if span > 0 else np.ones_like(values)
    return np.where(present, norm, 0.0)
