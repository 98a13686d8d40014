"""The space an auto-tune searches, as a user shapes it: knobs locked at a value, ranges narrowed.

A locked knob is not searched: every trial keeps it at the value it was locked at (the start
config carries it). A searched knob may get its own range, which must be finite, have its low
below its high and lie within the values the knob may take at all (`core.config.KNOBS`: the one
declaration of every knob); a log-scale knob (`rrf_k`) needs a range above zero. Bad choices
are refused with one `MemsenseError` that names the knob and what to do.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.tune import Knob


@dataclass(frozen=True)
class SearchSpace:
    """The knobs searched (each with its range) and those locked, with their values."""

    knobs: tuple[Knob, ...]
    locked: Mapping[str, float] = field(default_factory=dict)

    def start(self, base: Config) -> Config:
        """`base` with every locked knob at its locked value: where the search starts."""
        cfg = base
        for knob in self._locked_knobs:
            cfg = knob.knob.apply(cfg, knob.knob.rounded(self.locked[knob.name]))
        return cfg

    @property
    def _locked_knobs(self) -> tuple[Knob, ...]:
        from core.evaluation.tune import ALL_KNOBS

        return tuple(k for k in ALL_KNOBS if k.name in self.locked)

    @property
    def default(self) -> bool:
        """Nothing locked and every range the declared one."""
        return not self.locked and all(k.span is None for k in self.knobs)

    def signature(self) -> str:
        """A short digest of the choices ("" for the default space), to tell studies apart."""
        if self.default:
            return ""
        text = ";".join([*(f"{k.name}={k.low:g}..{k.high:g}" for k in self.knobs),
                         *(f"{n}:{v:g}" for n, v in sorted(self.locked.items()))])
        return hashlib.sha1(text.encode()).hexdigest()[:8]


def search_space(knobs: Sequence[Knob], locked: Mapping[str, float] | None = None,
                 ranges: Mapping[str, tuple[float, float]] | None = None) -> SearchSpace:
    """`knobs` less those `locked` (name -> value), each other one over `ranges[name]` when given
    (checked: see the module docstring); MemsenseError for a bad choice."""
    locked, ranges = dict(locked or {}), dict(ranges or {})
    names = {k.name for k in knobs}
    unknown = sorted((set(locked) | set(ranges)) - names)
    if unknown:
        raise MemsenseError(f"no knob {', '.join(unknown)} is searched; knobs: {', '.join(sorted(names))}")
    for name, value in locked.items():
        knob = next(k for k in knobs if k.name == name)
        lo, hi = knob.legal
        if not (math.isfinite(value) and lo <= value <= hi):
            raise MemsenseError(f"{name} is locked at {value:g}, outside the values it may take ({lo:g} to {hi:g}); "
                                "set it within them first, or unlock it")
    searched = []
    for knob in knobs:
        if knob.name in locked:
            continue
        if knob.name in ranges and tuple(ranges[knob.name]) != knob.bounds:
            knob = replace(knob, span=_checked(knob, *ranges[knob.name]))
        searched.append(knob)
    if not searched:
        raise MemsenseError("every knob is locked: unlock at least one knob to search")
    return SearchSpace(tuple(searched), locked)


def _checked(knob: Knob, low: float, high: float) -> tuple[float, float]:
    lo, hi = knob.legal
    if not (math.isfinite(low) and math.isfinite(high)):
        raise MemsenseError(f"the range of {knob.name} must be two numbers; give a finite min and max")
    if not low < high:
        raise MemsenseError(f"the range of {knob.name} is {low:g} to {high:g}: its min must be below its max "
                            "(to keep it at one value, lock it)")
    if low < lo or high > hi:
        raise MemsenseError(f"the range of {knob.name}, {low:g} to {high:g}, goes outside the values it may take "
                            f"({lo:g} to {hi:g}); narrow it")
    if knob.log and low <= 0:
        raise MemsenseError(f"{knob.name} is searched on a log scale: its min must be above 0, not {low:g}")
    return float(low), float(high)
