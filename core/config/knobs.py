"""What one knob is, declared once: the `Config` field that holds it, its bounds, its name in
Memsense's options, its label and help, the slider's decimals and group, and the range the
tuner searches. `core.config.schema` declares every field with `knob(...)`; validation, export,
the app's sliders and the tuner all read the resulting `KNOBS` table.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Iterable, Protocol, Self, TypeVar


class Configurable(Protocol):
    """What a knob reads and writes: a `core.config.Config` (a frozen dataclass declared there,
    after the knobs it is made of)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def with_weights(self, **weights: float) -> Self: ...


C = TypeVar("C", bound=Configurable)
"""A `core.config.Config`."""

WEIGHT_PREFIX = "route_weights."
META = "memsense_knob"
"""Key of a knob's declaration in a dataclass field's metadata."""


@dataclass(frozen=True)
class Knob:
    """One numeric setting. `name` is a `Config` field or `route_weights.<route>`.

    `group` is empty for settings with no slider (scheme parameters, pool limits); `tune` is
    the range the tuner searches (None: not tuned), `log` a log-uniform search.
    """

    name: str
    export: str
    low: float
    high: float
    label: str = ""
    help: str = ""
    decimals: int = 2
    group: str = ""
    tune: tuple[float, float] | None = None
    log: bool = False

    @property
    def is_weight(self) -> bool:
        return self.name.startswith(WEIGHT_PREFIX)

    @property
    def route(self) -> str:
        return self.name[len(WEIGHT_PREFIX):]

    @property
    def bounds(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def integer(self) -> bool:
        return self.decimals == 0

    def value(self, cfg: Any) -> float:
        return cfg.weight(self.route) if self.is_weight else getattr(cfg, self.name)

    def apply(self, cfg: C, value: float) -> C:
        """A copy of `cfg` with this knob at `value` (as given: round with `rounded` first)."""
        if self.is_weight:
            return cfg.with_weights(**{self.route: value})
        return replace(cfg, **{self.name: value})

    @staticmethod
    def apply_all(cfg: C, values: Iterable[tuple["Knob", float]]) -> C:
        """A copy of `cfg` with each knob at its value: the config `apply` one knob after another
        gives, in two copies (the fields, then the route weights) where that takes one per knob,
        and each copy validates the whole config."""
        changes: dict[str, Any] = {}
        weights: dict[str, float] = {}
        for knob, value in values:
            if knob.is_weight:
                weights[knob.route] = value
            else:
                changes[knob.name] = value
        out = replace(cfg, **changes) if changes else cfg
        return out.with_weights(**weights) if weights else out

    def rounded(self, value: float) -> float | int:
        """`value` at the knob's precision (whole numbers for integer knobs)."""
        return int(round(value)) if self.integer else round(float(value), self.decimals)


def knob(default: Any, export: str, low: float, high: float, **meta: Any) -> Any:
    """A dataclass field holding `default`, declared as a knob (see `Knob` for `meta`)."""
    return field(default=default, metadata={META: dict(export=export, low=low, high=high, **meta)})


def setting(default: Any, export: str) -> Any:
    """A dataclass field that is not a number (scheme, switches, dates): only its export name."""
    return field(default=default, metadata={"memsense_export": export})


ROUTE_HELP: dict[str, str] = {
    "vec_full": "cosine of the query to the whole exchange (the canonical QA JSON)",
    "vec_user": "cosine of the query to the user side of the chunk",
    "vec_asst": "cosine of the query to the assistant side of the chunk",
    "vec_next_user": "cosine of the query to what the user said next (turn chunks only)",
    "lexical": "BM25 keyword match on task tag + content",
    "facet_personal_info": "cosine of the query to the chunk's personal-information facet",
    "facet_preferences": "cosine of the query to the chunk's preferences facet",
    "facet_events": "cosine of the query to the chunk's events facet",
    "session_lexical": "BM25 over whole sessions (English stop words and stemming by default); "
                       "a session's rank goes to its session chunks (beyond Memsense)",
    "session_dense": "the session's best turn by cosine to the query (vec_full); a session's rank goes "
                     "to its session chunks (beyond Memsense)",
}
WEIGHT_KNOB: dict[str, Any] = dict(low=0.0, high=5.0, decimals=2, group="Route weights", tune=(0.0, 5.0))
"""Every route weight's declaration; one `Knob` per route is made from it."""


def weight_knob(route: str) -> Knob:
    return Knob(f"{WEIGHT_PREFIX}{route}", f"routeWeights.{route}", label=route,
                help=f"Weight w of the {route} route: {ROUTE_HELP[route]}. 0 removes the route.", **WEIGHT_KNOB)
