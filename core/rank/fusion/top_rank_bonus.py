"""The QMD top-rank bonus of the multi-session research note (SPEC §9) on top of RRF."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.config import Config
from core.rank.fusion import rrf
from core.records import Chunk


def fuse(ranks: np.ndarray, scores: np.ndarray, live: np.ndarray, cfg: Config,
                   chunks: Sequence[Chunk] = ()) -> tuple[np.ndarray, np.ndarray]:
    """RRF plus the QMD bonus (SPEC §9): +bonus_first when ranked 1st in any live route,
    else +bonus_top3 when ranked 2nd or 3rd in any. The bonus is reported on the best route."""
    fused, contrib = rrf.fuse(ranks, scores, live, cfg)
    best = np.where(live, ranks, np.iinfo(np.int32).max).min(axis=1)
    bonus = np.where(best == 1, cfg.bonus_first, np.where(best <= 3, cfg.bonus_top3, 0.0))
    return fused + bonus, contrib
