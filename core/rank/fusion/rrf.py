"""Reciprocal Rank Fusion (SPEC §3): Memsense's own scheme."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.config import Config
from core.rank.fusion.base import route_sum, rrf_contributions, weights_of
from core.records import Chunk


def fuse(ranks: np.ndarray, scores: np.ndarray, live: np.ndarray, cfg: Config,
        chunks: Sequence[Chunk] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal Rank Fusion: `rrf(c) = Σ_r w_r / (k + rank_r(c))`; Memsense k = 15, w = 1."""
    contrib = rrf_contributions(ranks, live, weights_of(cfg), cfg.rrf_k)
    return route_sum(contrib), contrib
