"""The config object holding every knob of the pipeline, validated on creation (SPEC §2-§5, §9).

This module is the single source of truth for every default. `Config()` is Memsense's own
behaviour; other presets are `dataclasses.replace` variants (see `core.config.presets`).
Saved and loaded as TOML or JSON with Memsense's parameter names (`alpha`, `lambda`,
`duplicateThreshold`, ...), so an exported file reads as the service's own options.
"""
from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Mapping

from core.config.knobs import META, WEIGHT_KNOB, Knob, knob, setting, weight_knob
from core.errors import MemsenseError
from core.records import MEMSENSE_ROUTES, ROUTES

SCHEMES: tuple[str, ...] = ("rrf", "linear", "quality", "top_rank_bonus")
"""Fusion schemes (SPEC §3, §9): the table of `core.rank.fusion`, one module per name there.
Adding a scheme is one module in `core/rank/fusion/` plus its name here."""

TOP_K_MAX = 50
"""The largest top_k the controls allow; recall keeps route lists deep enough for it."""


@dataclass(frozen=True)
class Config:
    """Every knob of recall limits, fusion, turn support and MMR. Defaults = Memsense."""

    scheme: str = setting("rrf", "fusion")
    route_weights: Mapping[str, float] = field(default_factory=lambda: {r: float(r in MEMSENSE_ROUTES) for r in ROUTES},
                                               metadata={"memsense_export": "routeWeights"})
    rrf_k: float = knob(15.0, "rrfK", 0.0, 1000.0, label="RRF k", decimals=1, group="Fusion and score",
                        tune=(1.0, 200.0), log=True,
                        help="Rank damping in w / (k + rank): a small k lets top ranks dominate, a large k flattens the fusion.")
    alpha: float = knob(0.1, "alpha", 0.0, 5.0, label="alpha (memory)", decimals=3, group="Fusion and score",
                        tune=(0.0, 1.0), help="Weight of the stored memory score: final = rrf + alpha · memory score.")
    mmr_lambda: float = knob(0.78, "lambda", 0.0, 1.0, label="lambda", group="Diversity (MMR)", tune=(0.3, 1.0),
                             help="MMR trade-off: mmr = lambda · final − (1 − lambda) · max redundancy. "
                                  "1 = pure relevance, lower = more diversity.")
    duplicate_threshold: float = knob(0.94, "duplicateThreshold", 0.0, 1.0, label="duplicate threshold",
                                      group="Diversity (MMR)", tune=(0.5, 1.0),
                                      help="A row whose redundancy with a picked row reaches this is skipped as a duplicate.")
    tag_weight: float = knob(0.35, "tagRedundancyWeight", 0.0, 1.0, label="tag redundancy weight",
                             group="Diversity (MMR)", tune=(0.0, 1.0), help="redundancy = max(cosine, this · tag Jaccard).")
    turn_support_cap: float = knob(0.12, "turnSupportCap", 0.0, 1.0, label="turn support cap", decimals=3,
                                   group="Turn support", tune=(0.0, 0.5),
                                   help="Most a session can gain from its best turn: turn_support = min(cap, factor · best turn rrf).")
    turn_support_factor: float = knob(0.6, "turnSupportFactor", 0.0, 5.0, label="turn support factor",
                                      group="Turn support", tune=(0.0, 5.0),
                                      help="Share of the best supporting turn's RRF score lent to its session (before the cap).")
    top_k: int = knob(4, "topK", 1, TOP_K_MAX, label="top k", decimals=0, group="Diversity (MMR)",
                      help="How many results are returned; the candidate pool holds "
                           "max(candidate multiplier · top_k, candidate minimum) chunks.")
    candidate_multiplier: int = knob(4, "candidateLimitMultiplier", 1, 8, decimals=0, tune=(2, 8))
    candidate_min: int = knob(32, "candidateLimitMin", 1, 2000, decimals=0, tune=(8, 96))
    route_multiplier: int = knob(2, "routeLimitMultiplier", 1, 4, decimals=0, tune=(1, 4))
    route_min: int = knob(40, "routeLimitMin", 1, 4000, decimals=0, tune=(16, 160))
    session_first: bool = setting(True, "sessionFirst")
    fallback_fill: bool = setting(True, "fallbackFill")
    distinct_sessions: bool = setting(False, "distinctSessions")
    """Selection by session (beyond Memsense): only the first row of each session in final-score
    order enters MMR; the others are skipped as "same session" (`core.rank.mmr`)."""
    # §9 Memory v2 linear hybrid
    linear_keyword_weight: float = knob(0.3, "linearKeywordWeight", 0.0, 1.0)
    linear_semantic_weight: float = knob(0.7, "linearSemanticWeight", 0.0, 1.0)
    linear_min_score: float = knob(0.15, "linearMinScore", 0.0, 1.0)
    linear_max_results: int = knob(10, "linearMaxResults", 1, 100, decimals=0)
    # §9 Phase 7 quality-weighted score
    quality_as_of: str = setting("", "qualityAsOf")
    quality_recency_base: float = knob(0.995, "qualityRecencyBase", 0.0, 1.0, decimals=3)
    # §9 QMD top-rank bonus
    bonus_first: float = knob(0.05, "topRankBonusFirst", 0.0, 1.0)
    bonus_top3: float = knob(0.02, "topRankBonusTop3", 0.0, 1.0)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.route_weights) - set(ROUTES))
        if unknown:
            raise MemsenseError(
                f"route_weights: unknown route(s) {', '.join(map(str, unknown))}; routes are {', '.join(ROUTES)}"
            )
        raw = {r: self.route_weights.get(r, 0.0) for r in ROUTES}
        problems = [f"route_weights.{r}: must be a number, got {shown(w)}" for r, w in raw.items()
                    if isinstance(w, bool) or not isinstance(w, (int, float))]  # before float() turns "1" into 1.0
        problems += [p for r, w in raw.items() if _huge(w)  # before float() overflows on it
                     for p in _check_number(f"route_weights.{r}", w, *WEIGHT_BOUNDS)]
        if problems:
            raise MemsenseError("invalid config: " + "; ".join(problems))
        object.__setattr__(self, "route_weights", MappingProxyType({r: float(w) for r, w in raw.items()}))
        problems = _problems(self)
        if problems:
            raise MemsenseError("invalid config: " + "; ".join(problems))
        for name, (lo, _) in BOUNDS.items():  # 50.0 for a whole-number knob is 50: counts and slices need ints
            if isinstance(lo, int) and isinstance(getattr(self, name), float):
                object.__setattr__(self, name, int(getattr(self, name)))

    def check_searchable(self) -> None:
        """A search needs at least one route that can find something, and a fusion that can
        score what it finds (a config that can only ever return nothing is refused)."""
        if not any(w > 0 for w in self.route_weights.values()):
            raise MemsenseError("every route weight is 0, so no route can find anything; give at least one route "
                                "a weight above 0 (e.g. vec_full = 1.0)")
        if self.scheme == "linear":
            self._check_linear()

    def _check_linear(self) -> None:
        """The linear score is `wk · bm25_norm + ws · cosine_norm`, each norm at most 1, and
        only the lexical and vec_full routes feed it: at best `wk·[lexical on] + ws·[vec_full on]`."""
        parts = {"linearKeywordWeight": (self.linear_keyword_weight, "lexical"),
                 "linearSemanticWeight": (self.linear_semantic_weight, "vec_full")}
        best = sum(w for w, route in parts.values() if self.route_weights[route] > 0)
        if best > 0 and best >= self.linear_min_score:
            return
        terms = ", ".join(f"{name} {w:g} (route {route} {'on' if self.route_weights[route] > 0 else 'off'})"
                          for name, (w, route) in parts.items())
        why = "every score is 0" if best == 0 else f"no score can reach linearMinScore {self.linear_min_score:g}"
        raise MemsenseError(f'with fusion = "linear" the best score is {best:g} ({terms}), so {why} and nothing '
                            "is returned; raise linearKeywordWeight or linearSemanticWeight, with its route's weight "
                            "above 0" + (", or lower linearMinScore" if best > 0 else ""))

    @property
    def candidate_limit(self) -> int:
        """`max(multiplier·top_k, min)`: the pool size (SPEC §2; Memsense 4·top_k, 32)."""
        return max(self.candidate_multiplier * self.top_k, self.candidate_min)

    @property
    def route_limit(self) -> int:
        """`max(multiplier·candidate_limit, min)`: each route's depth (SPEC §2; 2·, 40)."""
        return max(self.route_multiplier * self.candidate_limit, self.route_min)

    def weight(self, route: str) -> float:
        return self.route_weights[route]

    def with_weights(self, **weights: float) -> "Config":
        return replace(self, route_weights={**self.route_weights, **weights})


def _knob_table() -> dict[str, Knob]:
    table: dict[str, Knob] = {}
    for f in fields(Config):
        if f.name == "route_weights":
            table.update({k.name: k for k in map(weight_knob, ROUTES)})
        elif META in f.metadata:
            table[f.name] = Knob(f.name, **f.metadata[META])
    return table


KNOBS: dict[str, Knob] = _knob_table()
"""Every numeric knob by name (`route_weights.<route>` for a weight), in field order."""
BOUNDS: dict[str, tuple[float, float]] = {k.name: k.bounds for k in KNOBS.values() if not k.is_weight}
"""Bounds the controls allow, also used to validate loaded files: (low, high)."""
WEIGHT_BOUNDS: tuple[float, float] = (WEIGHT_KNOB["low"], WEIGHT_KNOB["high"])

MAX_ROUTE_DEPTH = int(
    max(
        BOUNDS["route_multiplier"][1] * max(BOUNDS["candidate_multiplier"][1] * TOP_K_MAX, BOUNDS["candidate_min"][1]),
        BOUNDS["route_min"][1],
    )
)
"""Deepest route list any valid config can ask for; recall keeps this many per route (§2)."""


def _problems(cfg: Config) -> list[str]:
    out: list[str] = []
    if cfg.scheme not in SCHEMES:
        out.append(f"scheme: {shown(cfg.scheme)} is not one of {', '.join(SCHEMES)}")
    for name, (lo, hi) in BOUNDS.items():
        out.extend(_check_number(name, getattr(cfg, name), lo, hi, integer=isinstance(lo, int)))
    for route, w in cfg.route_weights.items():
        out.extend(_check_number(f"route_weights.{route}", w, *WEIGHT_BOUNDS))
    for name in ("session_first", "fallback_fill", "distinct_sessions"):
        if not isinstance(getattr(cfg, name), bool):
            out.append(f"{name}: must be true or false, got {shown(getattr(cfg, name))}")
    if not isinstance(cfg.quality_as_of, str):
        out.append("quality_as_of: must be an ISO 8601 date-time string or empty")
    elif cfg.quality_as_of:
        from datetime import datetime

        try:
            datetime.fromisoformat(cfg.quality_as_of)
        except ValueError:
            out.append(f"quality_as_of: {shown(cfg.quality_as_of)} is not an ISO 8601 date-time")
    return out


def _huge(value: Any) -> bool:
    """A whole number too long for a float (thousands of digits): above every bound, and
    float() would overflow on it."""
    return isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000


def shown(value: Any) -> str:
    """`value` as a message shows it: short (a number of thousands of digits by its length, a
    nested list to two levels), so one bad value makes one readable line."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a whole number of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    short = reprlib.Repr()
    short.maxlevel, short.maxstring, short.maxother, short.maxlist, short.maxdict = 2, 60, 60, 4, 4
    return short.repr(value)


def _check_number(name: str, value: Any, lo: float, hi: float, integer: bool = False) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return [f"{name}: must be a number, got {shown(value)}"]
    if _huge(value):
        return [f"{name}: {shown(value)} is {'below the minimum' if value < 0 else 'above the maximum'} "
                f"{lo if value < 0 else hi}"]
    if integer and not float(value).is_integer():
        return [f"{name}: must be a whole number, got {value!r}"]
    if math.isnan(value) or math.isinf(value):
        return [f"{name}: must be a finite number, got {value!r}"]
    if value < lo:
        return [f"{name}: {value!r} is below the minimum {lo}" + (" (no negative weights)" if lo == 0 else "")]
    if value > hi:
        return [f"{name}: {value!r} is above the maximum {hi}"]
    return []


EXPORT_NAMES: dict[str, str] = {
    f.name: KNOBS[f.name].export if f.name in KNOBS else f.metadata["memsense_export"]
    for f in fields(Config) if f.name != "route_weights"
}
"""Memsense's parameter names for export; route weights nest under "routeWeights"."""
IMPORT_NAMES = {v: k for k, v in EXPORT_NAMES.items()}
