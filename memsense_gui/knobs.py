"""The tuning knobs the window exposes: label, what each does, its range and Memsense default.

Defaults and ranges are read from `core.config` (`Config()`, `BOUNDS`, `WEIGHT_BOUNDS`);
nothing here repeats a number, so the tooltips can never drift from the core.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.config import BOUNDS, EXPORT_NAMES, WEIGHT_BOUNDS, Config
from core.types import ROUTES

WEIGHT_PREFIX = "route_weights."


@dataclass(frozen=True)
class Knob:
    """One slider: `name` is a Config field or `route_weights.<route>`."""

    name: str
    label: str
    help: str
    decimals: int  # 0 = whole numbers

    @property
    def is_weight(self) -> bool:
        return self.name.startswith(WEIGHT_PREFIX)

    @property
    def route(self) -> str:
        return self.name[len(WEIGHT_PREFIX):]

    @property
    def bounds(self) -> tuple[float, float]:
        return WEIGHT_BOUNDS if self.is_weight else BOUNDS[self.name]

    @property
    def memsense_name(self) -> str:
        return f"routeWeights.{self.route}" if self.is_weight else EXPORT_NAMES[self.name]

    def value(self, cfg: Config) -> float:
        return cfg.weight(self.route) if self.is_weight else getattr(cfg, self.name)

    def apply(self, cfg: Config, value: float) -> Config:
        """A copy of `cfg` with this knob at `value` (rounded to the knob's decimals)."""
        value = int(round(value)) if self.decimals == 0 else round(float(value), self.decimals)
        if self.is_weight:
            return cfg.with_weights(**{self.route: value})
        return replace(cfg, **{self.name: value})

    def tooltip(self) -> str:
        default = self.value(Config())
        lo, hi = self.bounds
        return (f"<b>{self.label}</b> <code>{self.memsense_name}</code><br>{self.help}<br>"
                f"<i>Memsense default: {_fmt(default)}</i> · range {_fmt(lo)}–{_fmt(hi)}")


def _fmt(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


_D = Config()

ROUTE_HELP: dict[str, str] = {
    "vec_full": "cosine of the query to the whole exchange (the canonical QA JSON)",
    "vec_user": "cosine of the query to the user side of the chunk",
    "vec_asst": "cosine of the query to the assistant side of the chunk",
    "vec_next_user": "cosine of the query to what the user said next (turn chunks only)",
    "lexical": "BM25 keyword match on task tag + content",
    "facet_personal_info": "cosine of the query to the chunk's personal-information facet",
    "facet_preferences": "cosine of the query to the chunk's preferences facet",
    "facet_events": "cosine of the query to the chunk's events facet",
}

FUSION_KNOBS: tuple[Knob, ...] = (
    Knob("rrf_k", "RRF k", "Rank damping in w / (k + rank): a small k lets top ranks dominate, "
         "a large k flattens the fusion.", 1),
)
SCORE_KNOBS: tuple[Knob, ...] = (
    Knob("alpha", "alpha (memory)", "Weight of the stored memory score: final = rrf + alpha · memory score.", 3),
)
DIVERSITY_KNOBS: tuple[Knob, ...] = (
    Knob("mmr_lambda", "lambda", "MMR trade-off: mmr = lambda · final − (1 − lambda) · max redundancy. "
         "1 = pure relevance, lower = more diversity.", 2),
    Knob("duplicate_threshold", "duplicate threshold", "A row whose redundancy with a picked row reaches "
         "this is skipped as a duplicate.", 2),
    Knob("tag_weight", "tag redundancy weight", "redundancy = max(cosine, this · tag Jaccard).", 2),
    Knob("top_k", "top k", "How many results are returned; the candidate pool holds "
         f"max({_D.candidate_multiplier}·top_k, {_D.candidate_min}) chunks.", 0),
)
TURN_KNOBS: tuple[Knob, ...] = (
    Knob("turn_support_cap", "turn support cap", "Most a session can gain from its best turn: "
         "turn_support = min(cap, factor · best turn rrf).", 3),
    Knob("turn_support_factor", "turn support factor", "Share of the best supporting turn's RRF score "
         "lent to its session (before the cap).", 2),
)
WEIGHT_KNOBS: tuple[Knob, ...] = tuple(
    Knob(f"{WEIGHT_PREFIX}{r}", r, f"Weight w of the {r} route: {ROUTE_HELP[r]}. 0 removes the route.", 2)
    for r in ROUTES
)
GROUPS: tuple[tuple[str, tuple[Knob, ...]], ...] = (
    ("Diversity (MMR)", DIVERSITY_KNOBS),
    ("Fusion and score", FUSION_KNOBS + SCORE_KNOBS),
    ("Turn support", TURN_KNOBS),
    ("Route weights", WEIGHT_KNOBS),
)
ALL_KNOBS: dict[str, Knob] = {k.name: k for _, group in GROUPS for k in group}
