"""One config object holding every knob of the pipeline, validated on load (SPEC §2-§5, §9).

This module is the single source of truth for every default. `Config()` is Memsense's own
behaviour; other presets are `dataclasses.replace` variants (see `core.presets`).
Saved and loaded as TOML or JSON with Memsense's parameter names (`alpha`, `lambda`,
`duplicateThreshold`, ...), so an exported file reads as the service's own options.
"""
from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import tomli_w

from core.errors import MemsenseError
from core.types import ROUTES

SCHEMES: tuple[str, ...] = ("rrf", "linear", "quality", "top_rank_bonus")
"""Fusion schemes (SPEC §3, §9); `core.fusion` holds one function per name."""

TOP_K_MAX = 50
"""The largest top_k the controls allow; recall keeps route lists deep enough for it."""


@dataclass(frozen=True)
class Config:
    """Every knob of recall limits, fusion, turn support and MMR. Defaults = Memsense."""

    scheme: str = "rrf"
    route_weights: Mapping[str, float] = field(default_factory=lambda: {r: 1.0 for r in ROUTES})
    rrf_k: float = 15.0
    alpha: float = 0.1
    mmr_lambda: float = 0.78
    duplicate_threshold: float = 0.94
    tag_weight: float = 0.35
    turn_support_cap: float = 0.12
    turn_support_factor: float = 0.6
    top_k: int = 4
    candidate_multiplier: int = 4
    candidate_min: int = 32
    route_multiplier: int = 2
    route_min: int = 40
    session_first: bool = True
    fallback_fill: bool = True
    # §9 Memory v2 linear hybrid
    linear_keyword_weight: float = 0.3
    linear_semantic_weight: float = 0.7
    linear_min_score: float = 0.15
    linear_max_results: int = 10
    # §9 Phase 7 quality-weighted score
    quality_as_of: str = ""
    quality_recency_base: float = 0.995
    # §9 QMD top-rank bonus
    bonus_first: float = 0.05
    bonus_top3: float = 0.02

    def __post_init__(self) -> None:
        weights = {r: float(self.route_weights.get(r, 0.0)) for r in ROUTES}
        unknown = sorted(set(self.route_weights) - set(ROUTES))
        if unknown:
            raise MemsenseError(
                f"route_weights: unknown route(s) {', '.join(unknown)}; routes are {', '.join(ROUTES)}"
            )
        object.__setattr__(self, "route_weights", MappingProxyType(weights))
        problems = _problems(self)
        if problems:
            raise MemsenseError("invalid config: " + "; ".join(problems))

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


# Bounds the controls allow, also used to validate loaded files: (low, high).
BOUNDS: dict[str, tuple[float, float]] = {
    "rrf_k": (0.0, 1000.0),
    "alpha": (0.0, 5.0),
    "mmr_lambda": (0.0, 1.0),
    "duplicate_threshold": (0.0, 1.0),
    "tag_weight": (0.0, 1.0),
    "turn_support_cap": (0.0, 1.0),
    "turn_support_factor": (0.0, 5.0),
    "top_k": (1, TOP_K_MAX),
    "candidate_multiplier": (1, 8),
    "candidate_min": (1, 2000),
    "route_multiplier": (1, 4),
    "route_min": (1, 4000),
    "linear_keyword_weight": (0.0, 1.0),
    "linear_semantic_weight": (0.0, 1.0),
    "linear_min_score": (0.0, 1.0),
    "linear_max_results": (1, 100),
    "quality_recency_base": (0.0, 1.0),
    "bonus_first": (0.0, 1.0),
    "bonus_top3": (0.0, 1.0),
}
WEIGHT_BOUNDS = (0.0, 5.0)

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
        out.append(f"scheme: {cfg.scheme!r} is not one of {', '.join(SCHEMES)}")
    for name, (lo, hi) in BOUNDS.items():
        out.extend(_check_number(name, getattr(cfg, name), lo, hi, integer=isinstance(lo, int)))
    for route, w in cfg.route_weights.items():
        out.extend(_check_number(f"route_weights.{route}", w, *WEIGHT_BOUNDS))
    for name in ("session_first", "fallback_fill"):
        if not isinstance(getattr(cfg, name), bool):
            out.append(f"{name}: must be true or false, got {getattr(cfg, name)!r}")
    if not isinstance(cfg.quality_as_of, str):
        out.append("quality_as_of: must be an ISO 8601 date-time string or empty")
    elif cfg.quality_as_of:
        from datetime import datetime

        try:
            datetime.fromisoformat(cfg.quality_as_of)
        except ValueError:
            out.append(f"quality_as_of: {cfg.quality_as_of!r} is not an ISO 8601 date-time")
    return out


def _check_number(name: str, value: Any, lo: float, hi: float, integer: bool = False) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return [f"{name}: must be a number, got {value!r}"]
    if integer and not float(value).is_integer():
        return [f"{name}: must be a whole number, got {value!r}"]
    if math.isnan(value) or math.isinf(value):
        return [f"{name}: must be a finite number, got {value!r}"]
    if value < lo:
        return [f"{name}: {value!r} is below the minimum {lo}" + (" (no negative weights)" if lo == 0 else "")]
    if value > hi:
        return [f"{name}: {value!r} is above the maximum {hi}"]
    return []


# Memsense's parameter names for export; route weights nest under "routeWeights".
EXPORT_NAMES: dict[str, str] = {
    "scheme": "fusion",
    "rrf_k": "rrfK",
    "alpha": "alpha",
    "mmr_lambda": "lambda",
    "duplicate_threshold": "duplicateThreshold",
    "tag_weight": "tagRedundancyWeight",
    "turn_support_cap": "turnSupportCap",
    "turn_support_factor": "turnSupportFactor",
    "top_k": "topK",
    "candidate_multiplier": "candidateLimitMultiplier",
    "candidate_min": "candidateLimitMin",
    "route_multiplier": "routeLimitMultiplier",
    "route_min": "routeLimitMin",
    "session_first": "sessionFirst",
    "fallback_fill": "fallbackFill",
    "linear_keyword_weight": "linearKeywordWeight",
    "linear_semantic_weight": "linearSemanticWeight",
    "linear_min_score": "linearMinScore",
    "linear_max_results": "linearMaxResults",
    "quality_as_of": "qualityAsOf",
    "quality_recency_base": "qualityRecencyBase",
    "bonus_first": "topRankBonusFirst",
    "bonus_top3": "topRankBonusTop3",
}
IMPORT_NAMES = {v: k for k, v in EXPORT_NAMES.items()}


def to_dict(cfg: Config) -> dict[str, Any]:
    """The config under Memsense's parameter names (plain JSON/TOML types)."""
    out: dict[str, Any] = {EXPORT_NAMES[f.name]: getattr(cfg, f.name) for f in fields(cfg) if f.name != "route_weights"}
    out["routeWeights"] = dict(cfg.route_weights)
    return out


def from_dict(data: Mapping[str, Any], base: Config | None = None) -> Config:
    """Build a config from Memsense-named (or field-named) keys; absent keys keep `base`'s."""
    if not isinstance(data, Mapping):
        raise MemsenseError(f"config must be a table/object of settings, got {type(data).__name__}")
    base = base or Config()
    changes: dict[str, Any] = {}
    problems: list[str] = []
    valid = {f.name for f in fields(Config)}
    for key, value in data.items():
        name = IMPORT_NAMES.get(key, key)
        if key in ("routeWeights", "route_weights"):
            if not isinstance(value, Mapping):
                problems.append(f"{key}: must be a table of route = weight")
                continue
            changes["route_weights"] = {**base.route_weights, **value}
        elif name in valid:
            changes[name] = value
        else:
            problems.append(f"{key}: unknown setting")
    if problems:
        raise MemsenseError("invalid config: " + "; ".join(problems))
    return replace(base, **changes)


def dumps(cfg: Config, fmt: str) -> str:
    """Serialise as "toml" or "json"."""
    data = to_dict(cfg)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "toml":
        return tomli_w.dumps(data)
    raise MemsenseError(f"unknown config format {fmt!r}; use toml or json")


def loads(text: str, fmt: str, source: str = "config") -> Config:
    try:
        data = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemsenseError(f"{source}: not valid {fmt.upper()} ({exc}); fix the file or export it again") from None
    try:
        return from_dict(data)
    except MemsenseError as exc:
        raise MemsenseError(f"{source}: {exc}") from None


def format_for(path: Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".toml", ".json"):
        return suffix[1:]
    raise MemsenseError(f"{path}: config files end in .toml or .json")


def save(cfg: Config, path: str | Path) -> None:
    """Write atomically (temp file + rename): a crash never leaves half a config."""
    from core.atomic import write_text_atomic

    path = Path(path)
    write_text_atomic(path, dumps(cfg, format_for(path)))


def load(path: str | Path) -> Config:
    path = Path(path)
    fmt = format_for(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MemsenseError(f"cannot read config {path}: {exc.strerror}") from None
    return loads(text, fmt, source=str(path))
