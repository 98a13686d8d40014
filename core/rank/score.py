"""The final score of a row (SPEC §3): one place for the formula and the memory-score clamp."""
from __future__ import annotations

import math
from typing import Any


def clamp01(value: Any) -> float:
    """Memory score clamped to [0, 1]; a missing, non-numeric or NaN value is 0.5 (§3)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return 0.5
    return min(1.0, max(0.0, float(value)))


def final_score(rrf_score: float, memory_score: Any, alpha: float) -> float:
    """`final = rrf_score + alpha · clamp01(memory_score)`, rounded to 6 decimals (§3)."""
    return final_of_clamped(rrf_score, clamp01(memory_score), alpha)


def final_of_clamped(rrf_score: float, clamped_memory_score: float, alpha: float) -> float:
    """`final_score` for a memory score already clamped (the pool clamps once per chunk)."""
    return round(rrf_score + alpha * clamped_memory_score, 6)
