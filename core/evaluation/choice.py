"""Choosing what to recommend among configs (SPEC §16): the one-standard-error rule over
cross-validated held-out scores.

Every contender (the start config, each built-in and user preset, the searched config) has one
held-out metric per fold. Let `m*` be the best mean over folds and `se*` its standard error
(sample sd / √k). Among the contenders whose mean is at least `m* − se*`, the one with the fewest
knobs changed from the start config is chosen; ties go to the higher mean, then the name. A
search's config comes from the data and a preset does not, but both are judged alike: by how they
score on users they were not chosen on. docs/EVALUATION.md works an example through.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from core.config import Config, to_dict
from core.config.provenance import changed_knobs

START, PRESET, SEARCH = "start", "preset", "search"
"""What a contender is: the start config, a preset (built-in or the user's), or the search's config."""


@dataclass(frozen=True)
class Contender:
    """A config and its held-out metric on each fold (a preset's plain metric on the fold's held-out
    users; the search's fold winner's on the users its fold held out)."""

    name: str
    kind: str  # START | PRESET | SEARCH
    config: Config
    folds: tuple[float, ...]
    knobs_changed: int  # settings that differ from the start config (core.config.provenance.changed_knobs)

    @property
    def mean(self) -> float:
        return float(np.mean(self.folds))

    @property
    def se(self) -> float:
        """Standard error of the mean over folds: sample sd / √k (0 with one fold)."""
        k = len(self.folds)
        return float(np.std(self.folds, ddof=1) / math.sqrt(k)) if k > 1 else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """mean ± 1.96 se: a rough 95 % interval of the cross-validated estimate."""
        return self.mean - 1.96 * self.se, self.mean + 1.96 * self.se

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {"name": self.name, "kind": self.kind, "cv_mean": self.mean, "cv_se": self.se,
                "cv_ci95": [lo, hi], "folds": list(self.folds), "knobs_changed": self.knobs_changed,
                "config": to_dict(self.config)}


def contender(name: str, kind: str, config: Config, folds: Sequence[float], start: Config) -> Contender:
    return Contender(name, kind, config, tuple(float(v) for v in folds), len(changed_knobs(config, start)))


@dataclass(frozen=True)
class Choice:
    """The contenders (best mean first), the best by mean, the chosen one, and why."""

    contenders: tuple[Contender, ...]
    best: Contender
    chosen: Contender
    runner_up: Contender | None
    bar: float  # m* − se*: the lowest mean that is eligible

    @property
    def eligible(self) -> tuple[Contender, ...]:
        return tuple(c for c in self.contenders if c.mean >= self.bar)

    def reason(self) -> str:
        """Why the chosen contender won, in words with the figures."""
        c, b = self.chosen, self.best
        within = (f"the best cross-validated mean ({b.mean:.3f}, {b.name})" if c is b else
                  f"within one standard error of the best ({b.name} {b.mean:.3f} − se {b.se:.3f} = {self.bar:.3f})")
        fewest = f"{c.knobs_changed} setting{'s' if c.knobs_changed != 1 else ''} changed from the start"
        others = len(self.eligible) - 1
        among = (f"the fewest of the {len(self.eligible)} contenders within one standard error" if others else
                 "the only contender within one standard error")
        return f"{c.name}: cross-validated {c.mean:.3f}, {within}, with {fewest}, {among}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": "one standard error (SPEC §16)", "bar": self.bar, "chosen": self.chosen.name,
                "best_mean": self.best.name, "runner_up": self.runner_up.name if self.runner_up else None,
                "reason": self.reason(), "contenders": [c.to_json() for c in self.contenders]}


def _rule_order(c: Contender) -> tuple[int, float, str]:
    return (c.knobs_changed, -c.mean, c.name)


def choose(contenders: Sequence[Contender]) -> Choice:
    """The one-standard-error choice (module docstring). The runner-up is the contender the rule
    would choose were the chosen one absent."""
    if not contenders:
        raise ValueError("no contender to choose from")
    by_mean = tuple(sorted(contenders, key=lambda c: (-c.mean, c.knobs_changed, c.name)))
    best = by_mean[0]
    bar = best.mean - best.se
    eligible = sorted((c for c in by_mean if c.mean >= bar), key=_rule_order)
    chosen = eligible[0]
    rest = [c for c in by_mean if c is not chosen]
    rest_best = rest[0] if rest else None
    runner_up = None
    if rest_best is not None:
        rest_bar = rest_best.mean - rest_best.se
        runner_up = min((c for c in rest if c.mean >= rest_bar), key=_rule_order)
    return Choice(by_mean, best, chosen, runner_up, bar)


def preset_folds(scores: Mapping[str, float], folds: Sequence[Sequence[str]]) -> tuple[float, ...]:
    """A fixed config's held-out metric per fold from its per-question scores: the mean over each
    fold's held-out question ids (a preset learns nothing, so its held-out score is its plain one)."""
    return tuple(float(np.mean([scores[q] for q in ids])) for ids in folds)
