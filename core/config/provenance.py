"""Where an exported config came from: a header naming the preset, store, model, the metric
with its train and held-out figures, the date, and every knob changed from Memsense's defaults.

In TOML the header is comment lines above the settings; JSON has no comments, so it is the
object under the `provenance` key, which loading ignores. Either way the file loads as the
same config (`core.config` reads past it).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.atomic import STDOUT, write_output
from core.config.files import dumps, format_for, to_dict
from core.config.schema import Config

PROVENANCE_KEY = "provenance"


def changed_knobs(cfg: Config, base: Config | None = None) -> list[tuple[str, Any, Any]]:
    """(config-file name, value, Memsense default) of every setting that differs from `base`."""
    now, default = to_dict(cfg), to_dict(base or Config())
    out = [(f"routeWeights.{r}", w, default["routeWeights"][r]) for r, w in now.pop("routeWeights").items()
           if w != default["routeWeights"][r]]
    default.pop("routeWeights")
    return [(k, v, default[k]) for k, v in now.items() if v != default[k]] + out


@dataclass(frozen=True)
class FoldFigure:
    """One cross-validation fold: the users it held out, its winner's train and held-out metric."""

    number: int
    held_users: tuple[str, ...]
    train: float
    held_out: float

    def record(self) -> dict[str, Any]:
        return {"fold": self.number, "held_out_users": list(self.held_users), "train": self.train,
                "held_out": self.held_out}

    def line(self) -> str:
        return (f"  fold {self.number} (held out {', '.join(self.held_users)}): train {self.train:.3f}, "
                f"held-out {self.held_out:.3f}")


@dataclass(frozen=True)
class Provenance:
    """What to say about an exported config; empty fields are left out."""

    preset: str = ""
    store: str = ""
    model: str = ""
    metric: str = ""
    train: float | None = None
    held_out: float | None = None
    held_out_how: str = ""  # e.g. "5-fold cross-validation by user", "held-out users conv-42, conv-43"
    evaluated: float | None = None  # the metric on an evaluation's questions (neither train nor held-out)
    evaluated_on: str = ""  # which questions, e.g. "26 questions of demo-questions.json"
    folds: tuple[FoldFigure, ...] = ()  # with cross-validation: every fold's figures
    choice: tuple[tuple[str, str], ...] = ()
    """With a choice among configs (SPEC §16): (label, text) lines, e.g. each contender's cross-validated
    figure, the chosen one's estimate and interval, the runner-up and the reason."""
    date: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def record(self, cfg: Config) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in (("preset", self.preset), ("store", self.store),
                                                  ("model", self.model), ("date", self.date)) if v}
        if self.metric:
            out["metric"] = {k: v for k, v in (("name", self.metric), ("train", self.train),
                                                ("held_out", self.held_out), ("held_out_how", self.held_out_how),
                                                ("evaluated", self.evaluated), ("evaluated_on", self.evaluated_on))
                             if v not in (None, "")}
            if self.folds:
                out["metric"]["folds"] = [f.record() for f in self.folds]
        if self.choice:
            out["choice"] = dict(self.choice)
        out["changed_from_memsense_defaults"] = {k: {"value": v, "default": d} for k, v, d in changed_knobs(cfg)}
        return out

    def lines(self, cfg: Config) -> list[str]:
        """The header as text lines (without comment marks)."""
        out = ["Exported by memsense-gui" + (f" on {self.date}" if self.date else "")]
        out += [f"{name}: {value}" for name, value in (("preset", self.preset), ("store", self.store),
                                                         ("model", self.model)) if value]
        if self.metric:
            figures = [f"train {self.train:.3f}" if self.train is not None else "",
                       f"held-out {self.held_out:.3f}" if self.held_out is not None else "",
                       f"evaluated {self.evaluated:.3f}" if self.evaluated is not None else ""]
            how = "; ".join(h for h in (self.held_out_how, f"evaluated on {self.evaluated_on}" if self.evaluated_on
                                        else "") if h)
            how = f" ({how})" if how else ""
            out.append(f"metric: {self.metric}: " + ", ".join(f for f in figures if f) + how)
            out += [f.line() for f in self.folds]
        out += [f"{label}: {text}" for label, text in self.choice]
        changed = changed_knobs(cfg)
        out.append("changed from Memsense's defaults:" + (" none" if not changed else ""))
        out += [f"  {k} = {v!r} (default {d!r})" for k, v, d in changed]
        return out


def dumps_with_provenance(cfg: Config, fmt: str, provenance: Provenance) -> str:
    """The config as TOML (header as comments) or JSON (header under `provenance`)."""
    if fmt == "json":
        data = json.loads(dumps(cfg, "json"))
        return json.dumps({PROVENANCE_KEY: provenance.record(cfg), **data}, indent=2) + "\n"
    return "".join(f"# {line}\n" for line in provenance.lines(cfg)) + "\n" + dumps(cfg, fmt)


def save_with_provenance(cfg: Config, path: str | Path, provenance: Provenance) -> Path:
    """Write atomically; the format follows the suffix (.toml or .json; TOML for `-`, standard output)."""
    path = Path(path)
    fmt = "toml" if str(path) == STDOUT else format_for(path)
    return write_output(path, dumps_with_provenance(cfg, fmt, provenance))
