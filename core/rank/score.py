"""The final score of a row (SPEC §3): one place for the formula, the memory-score clamp and the
rounding (`round6`: Python's `round(x, 6)` for arrays, bit for bit)."""
from __future__ import annotations

from typing import Any

import numpy as np

from core.records import clamp01

__all__ = ["clamp01", "final_of_clamped", "final_score", "round6"]


def final_score(rrf_score: float, memory_score: Any, alpha: float) -> float:
    """`final = rrf_score + alpha · clamp01(memory_score)`, rounded to 6 decimals (§3)."""
    return final_of_clamped(rrf_score, clamp01(memory_score), alpha)


def final_of_clamped(rrf_score: float, clamped_memory_score: float, alpha: float) -> float:
    """`final_score` for a memory score already clamped (the pool clamps once per chunk)."""
    return round(rrf_score + alpha * clamped_memory_score, 6)


def round6(values: np.ndarray) -> np.ndarray:
    """Python's `round(x, 6)` for every value: `rint(x·10⁶) / 10⁶`, and Python's own `round`
    where `x·10⁶` lies too near a half for the product's rounding error to be ruled out."""
    values = np.asarray(values, dtype=np.float64)
    scaled = values * 1e6
    out = np.rint(scaled) / 1e6
    with np.errstate(invalid="ignore"):  # inf and nan go to Python's round below
        near = ~(np.abs(scaled) < 2.0 ** 52) | (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
    for i in np.flatnonzero(near).tolist():
        out.flat[i] = round(float(values.flat[i]), 6)
    return out
