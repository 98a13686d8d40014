"""`round6` (final scores of a whole pool at once) is `js_round(x, 6)` bit for bit: on exact ties,
next to them, at the edges of its fast path (2⁵², infinities, nan) and in any shape."""
from __future__ import annotations

import warnings

import numpy as np

from core.rank.score import js_round, round6


def test_round6_is_js_round_of_each_value():
    rng = np.random.default_rng(3)
    halves = (rng.integers(-10 ** 7, 10 ** 7, 3000) + 0.5) / 1e6
    values = np.concatenate([
        rng.random(3000) * 3, halves, np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf),
        rng.normal(size=2000) * 10.0 ** rng.integers(-9, 12, 2000),
        np.array([0.0, -0.0, 1 / 128, -1 / 128, 4.5e9, 4.6e9, -4.6e9, 2.0 ** 52 / 1e6, 1e300]),
    ])
    want = np.array([js_round(float(v), 6) for v in values])
    got = round6(values)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))  # -0.0 told apart from 0.0
    assert np.array_equal(round6(values[:8000].reshape(-1, 4)).view(np.int64), want[:8000].reshape(-1, 4).view(np.int64))


def test_round6_takes_infinities_and_nan_without_a_warning():
    values = np.array([np.inf, -np.inf, np.nan, 0.1234565, 0.0078125])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = round6(values)
    assert got[:2].tolist() == [np.inf, -np.inf] and np.isnan(got[2])
    assert got[3:].tolist() == [js_round(0.1234565, 6), 0.007813]
