""""What would it take": the smallest single-knob changes that bring a memory into the results.

For a memory the re-rank did not return, each knob is moved alone, away from its current
value in both directions, until the memory is returned: a scan of distances growing
geometrically from 1e-4 of the knob's range to the whole range, then bisection between the
last value that failed and the first that worked, then the value with the fewest decimals at
most 2 % further than that boundary that still works. Every entry is the outcome of an actual re-rank of the cached
pool at that value (`rerank(pool, changed config)`), so the rank it states and the results it
pushes out are facts, not estimates. Values that need deeper route lists (top_k up) are
re-ranked on the deepest pool the caller gives (`deepest`); a pool too shallow for a value
counts as "does not return it". Knobs are named as in config files (`lambda`, `rrfK`,
`routeWeights.lexical`, ...), and `apply_change` applies one the way a loaded file would.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

from core import config as config_io
from core.config import KNOBS, Config, Knob
from core.config.knobs import WEIGHT_PREFIX
from core.rank.ranking import Ranking
from core.rank.rerank import rerank
from core.recall.pool import PoolTooShallow, RecallPool
from core.records import ROUTES


WHATIF_KNOBS: tuple[Knob, ...] = tuple(
    KNOBS[name] for name in (*(f"{WEIGHT_PREFIX}{r}" for r in ROUTES), "rrf_k", "mmr_lambda", "duplicate_threshold",
                             "alpha", "tag_weight", "turn_support_cap", "turn_support_factor", "top_k"))
"""Every knob tried: each route weight, k, lambda, duplicate threshold, alpha, the tag weight,
turn-support cap and factor, top_k; each over its whole valid range (`core.config.KNOBS`)."""

SCAN_STEPS = 24
BISECTIONS = 16
MAX_DECIMALS = 6
ROUNDING_SLACK = 0.02
"""A rounder value may move the knob this share further than the boundary found."""


class Change(NamedTuple):
    """One verified single-knob change and what it does."""

    knob: str
    value: float | int
    current: float | int
    rank: int  # the memory's result rank under the change
    pushes_out: tuple[str, ...]  # results of the current config that the change drops

    def describe(self) -> str:
        """In words: "lower lambda from 0.78 to 0.47: returned at rank 4, pushes out X"."""
        verb = "raise" if self.value > self.current else "lower"
        out = ", pushes out " + ", ".join(self.pushes_out) if self.pushes_out else ", pushes nothing out"
        return f"{verb} {self.knob} from {self.current:g} to {self.value:g}: returned at rank {self.rank}{out}"

    def to_json(self) -> dict[str, Any]:
        return {"knob": self.knob, "value": self.value, "current": self.current, "rank": self.rank,
                "pushes_out": list(self.pushes_out)}


@dataclass(frozen=True)
class WhatIf:
    """The answer for one memory: the changes found, and why there are none when empty."""

    memory_id: str
    changes: tuple[Change, ...]
    note: str  # "" or why no re-rank knob can help (returned already, not recalled, a turn chunk)


def knob_value(cfg: Config, knob: str) -> float:
    """A knob's value in `cfg`, by its config-file name."""
    data = config_io.to_dict(cfg)
    if knob.startswith("routeWeights."):
        return float(data["routeWeights"][knob.split(".", 1)[1]])
    return data[knob]


def apply_change(cfg: Config, knob: str, value: float) -> Config:
    """`cfg` with one knob (config-file name) set, through the same path as loading a file."""
    if knob.startswith("routeWeights."):
        return config_io.from_dict({"routeWeights": {knob.split(".", 1)[1]: value}}, base=cfg)
    return config_io.from_dict({knob: value}, base=cfg)


def what_would_change(pool: RecallPool, cfg: Config, memory_id: str, *,
                      knobs: Sequence[Knob] = WHATIF_KNOBS, base: Ranking | None = None,
                      check: Callable[[], None] | None = None, deepest: RecallPool | None = None) -> WhatIf:
    """The smallest change of each knob alone that returns `memory_id`, smallest first
    (by the share of the knob's range it moves); at most one entry per knob. `check` is
    called before each knob (a task's cancel check raises there). `deepest`: this query's
    deepest pool (`core.recall.pool.deepest`), read for chunks `pool` does not hold and
    re-ranked for every value tried (None: `pool` itself)."""
    base = base or rerank(pool, cfg)
    if memory_id in base.result_ids:
        return WhatIf(memory_id, (), "it is returned already")
    deep = pool if deepest is None else deepest
    i = deep.index_of(memory_id)
    if i is None or not (deep.ranks[i] > 0).any():
        return WhatIf(memory_id, (), f"no route recalled it (each list kept to depth {deep.depth}); "
                                     "no re-rank knob can bring in what recall did not find")
    chunk = deep.chunks[i]
    if chunk.kind == "turn" and base.session_first and _has_session_chunk(deep, chunk.session_id):
        return WhatIf(memory_id, (), f"turn chunk: session-first results are sessions, and its session "
                                     f"{chunk.session_id} has a session chunk, so no knob of the re-rank returns it "
                                     "(ask about its session instead)")
    search = _Search(deep, cfg, memory_id, base.result_ids)
    found = []
    for knob in knobs:
        if check is not None:
            check()
        change = search.smallest(knob)
        if change is not None:
            found.append(change)
    spans = {k.export: k.high - k.low for k in knobs}
    found.sort(key=lambda c: (abs(c.value - c.current) / spans[c.knob], c.knob))
    note = ""
    if not found:
        note = "no single knob within its range returns it"
    return WhatIf(memory_id, tuple(found), note)


def _has_session_chunk(pool: RecallPool, session_id: str) -> bool:
    """Whether the pool holds a session chunk of that session. A turn chunk is returned only
    from the candidate pool; in it, the turn supports its session, whose session chunk then
    becomes a session row, and with any session row only sessions are returned (§4)."""
    return any(c.kind == "session" and c.session_id == session_id for c in pool.chunks)


class _Search:
    """Re-ranks of one pool with one knob moved, memoised, answering "is the memory returned?"."""

    def __init__(self, pool: RecallPool, cfg: Config, memory_id: str, current_ids: Sequence[str]):
        self.pool, self.cfg, self.memory_id, self.current_ids = pool, cfg, memory_id, list(current_ids)
        self._seen: dict[tuple[str, float], list[str] | None] = {}

    def results(self, knob: str, value: float) -> list[str] | None:
        """Result ids at that value; None when the pool is too shallow for it."""
        key = (knob, value)
        if key not in self._seen:
            try:
                self._seen[key] = rerank(self.pool, apply_change(self.cfg, knob, value)).result_ids
            except PoolTooShallow:  # recall kept too few per route for this config's route_limit
                self._seen[key] = None
        return self._seen[key]

    def works(self, knob: str, value: float) -> bool:
        ids = self.results(knob, value)
        return ids is not None and self.memory_id in ids

    def change(self, knob: str, value: float, current: float) -> Change:
        ids = self.results(knob, value) or []
        return Change(knob, value, current, ids.index(self.memory_id) + 1,
                      tuple(m for m in self.current_ids if m not in ids))

    def smallest(self, knob: Knob) -> Change | None:
        current = knob_value(self.cfg, knob.export)
        if knob.integer:
            return self._integer(knob, int(current))
        best: float | None = None
        for direction in (+1, -1):
            value = self._first(knob, float(current), direction)
            if value is not None and (best is None or abs(value - current) < abs(best - current)):
                best = value
        return None if best is None else self.change(knob.export, best, current)

    def _integer(self, knob: Knob, current: int) -> Change | None:
        steps = sorted((v for v in range(int(knob.low), int(knob.high) + 1) if v != current),
                       key=lambda v: (abs(v - current), v))
        for v in steps:
            if self.works(knob.export, v):
                return self.change(knob.export, v, current)
        return None

    def _first(self, knob: Knob, current: float, direction: int) -> float | None:
        room = (knob.high - current) if direction > 0 else (current - knob.low)
        if room <= 0:
            return None
        span = knob.high - knob.low
        dists = [min(room, span * 1e-4 * (1e4 ** (s / (SCAN_STEPS - 1)))) for s in range(SCAN_STEPS)]
        done = 0.0
        for d in sorted(set(dists)):
            if self.works(knob.export, current + direction * d):
                return self._boundary(knob.export, current, direction, done, d)
            done = d
        return None

    def _boundary(self, knob: str, current: float, direction: int, fails: float, works: float) -> float:
        """Bisect the distance between a failing and a working one, then take the value with the
        fewest decimals at most `ROUNDING_SLACK` further that still works."""
        for _ in range(BISECTIONS):
            mid = (fails + works) / 2
            if mid in (fails, works):
                break
            if self.works(knob, current + direction * mid):
                works = mid
            else:
                fails = mid
        hi = current + direction * works
        slack = ROUNDING_SLACK * works
        for decimals in range(MAX_DECIMALS + 1):
            scale = 10 ** decimals
            nice = round((math.ceil(hi * scale) if direction > 0 else math.floor(hi * scale)) / scale, decimals)
            if abs(nice - hi) <= slack and self.works(knob, nice):
                return nice
        return hi
