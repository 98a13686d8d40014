"""The sliders of the tuning panel, grouped: every knob with a `group` in its declaration
(`core.config.KNOBS`), in declaration order. Labels, help, bounds, decimals and Memsense names
all come from there; this module only lays them out and formats their tooltips.
"""
from __future__ import annotations

from typing import Any

from core.config import KNOBS, Config
from core.config.knobs import Knob

__all__ = ["ALL_KNOBS", "GROUPS", "Knob", "WEIGHT_KNOBS", "apply_rounded", "tooltip"]

GROUP_ORDER = ("Diversity (MMR)", "Fusion and score", "Turn support", "Route weights")
GROUPS: tuple[tuple[str, tuple[Knob, ...]], ...] = tuple(
    (group, tuple(k for k in KNOBS.values() if k.group == group)) for group in GROUP_ORDER
)
ALL_KNOBS: dict[str, Knob] = {k.name: k for _, group in GROUPS for k in group}
WEIGHT_KNOBS: tuple[Knob, ...] = tuple(k for k in ALL_KNOBS.values() if k.is_weight)


def apply_rounded(knob: Knob, cfg: Config, value: float) -> Config:
    """A copy of `cfg` with `knob` at the slider's `value`, at the knob's precision."""
    return knob.apply(cfg, knob.rounded(value))


def tooltip(knob: Knob) -> str:
    default = knob.value(Config())
    lo, hi = knob.bounds
    return (f"<b>{knob.label}</b> <code>{knob.export}</code><br>{knob.help}<br>"
            f"<i>Memsense default: {_fmt(default)}</i> · range {_fmt(lo)}–{_fmt(hi)}")


def _fmt(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
