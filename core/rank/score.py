"""The final score of a row (SPEC §3): one place for the formula, the memory-score clamp and the
rounding, done as Memsense does it: `Number(x.toFixed(6))` in JavaScript.

`toFixed` rounds the exact binary value of the double, and of two equally near results it picks
the one of larger magnitude (half away from zero): `(0.0078125).toFixed(6)` is `0.007813`, where
Python's `round` and `format` pick the even one, `0.007812`. The two agree everywhere but on
those exact ties (doubles that are odd multiples of 2⁻⁷ at 6 decimals, of 2⁻⁵ at 4).
`js_round` is the number (`Number(x.toFixed(d))`), `to_fixed` the text, `round6` the number for
arrays, bit for bit."""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from core.records import clamp01

__all__ = ["clamp01", "final_of_clamped", "final_score", "js_round", "round6", "to_fixed"]


def final_score(rrf_score: float, memory_score: Any, alpha: float) -> float:
    """`final = rrf_score + alpha · clamp01(memory_score)`, rounded to 6 decimals (§3)."""
    return final_of_clamped(rrf_score, clamp01(memory_score), alpha)


def final_of_clamped(rrf_score: float, clamped_memory_score: float, alpha: float) -> float:
    """`final_score` for a memory score already clamped (the pool clamps once per chunk)."""
    return js_round(rrf_score + alpha * clamped_memory_score, 6)


def to_fixed(value: float, decimals: int) -> str:
    """JavaScript's `value.toFixed(decimals)` (for |value| < 10²¹, where it is not exponential)."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    exact = Decimal(value + 0.0)  # + 0.0: -0 shows as 0, as in JavaScript
    return format(exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP), f".{decimals}f")


def js_round(value: float, decimals: int) -> float:
    """`Number(value.toFixed(decimals))`: Python's `round` but on an exact tie, which goes away from zero."""
    scaled = value * 10.0**decimals
    if not abs(scaled) < 2.0**52 or abs(scaled - math.floor(scaled) - 0.5) > 1e-6:
        return round(value, decimals)  # not near a tie: Python's correctly rounded result is toFixed's
    return float(to_fixed(value, decimals))


ZERO, ONE = np.zeros(()), np.ones(())
"""0 and 1 as 0-d arrays of doubles, for numpy calls on small arrays in hot paths (MMR's picks,
a replayed case's scores): numpy converts a Python float operand on every call, about half of
a 1 us call on a few dozen values, and takes an array as it is; the values and the results'
dtype (float64) are those of 0.0 and 1.0."""

_MILLION, _HALF, _NEAR = np.asarray(1e6), np.asarray(0.5), np.asarray(1e-6)
"""`round6`'s constants as 0-d arrays of doubles: numpy converts a Python float operand on every
call (about half of a 1 us call on a few dozen values); the values and the results are the same."""


def round6(values: np.ndarray) -> np.ndarray:
    """`js_round(x, 6)` for every value: `rint(x·10⁶) / 10⁶`, and `js_round` itself where `x·10⁶`
    lies too near a half for the product's rounding error to be ruled out (or is not below 2⁵²,
    or not finite). When every `x·10⁶` is below 2⁵², its distance to a half is `0.5 − |x·10⁶ −
    rint(x·10⁶)|`, as `|frac − 0.5|` would give it: both are exact where they are near 0."""
    values = np.asarray(values, dtype=np.float64)
    scaled = values * _MILLION
    out = np.rint(scaled)
    size = np.abs(scaled)
    if not size.size or size.item(size.argmax()) < 2.0 ** 52:  # nan fails this too (argmax stops at the first)
        near = (_HALF - np.abs(scaled - out) < _NEAR).ravel().nonzero()[0]
    else:
        with np.errstate(invalid="ignore"):  # inf and nan go to Python's round below
            near = np.flatnonzero(~(np.abs(scaled) < 2.0 ** 52) | (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6))
    out /= _MILLION
    for i in near.tolist():
        out.flat[i] = js_round(float(values.flat[i]), 6)
    return out
