"""One question across the kept runs of its question file: the rating loop's memory.

The runs are the store's history (`core.evaluation.history`); a run counts for a question file
when it ranked that very file (the same SHA-256 of its bytes, as `core.evaluation.experiments`
refuses to compare runs of other files). A run that ranked several configs gives one value per
config. "Last" is the newest such run that scored the question on the metric, under the config
asked for when it ranked that one, else its first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from core.evaluation.experiments import PASS
from core.evaluation.history import Run


@dataclass(frozen=True)
class RunValue:
    """A question's value on `metric` under one config of one kept run."""

    run_id: int
    time: float  # seconds since the epoch
    kind: str
    config: str
    metric: str
    value: float
    name: str = ""  # the run's own name, when it was given one

    @property
    def passes(self) -> bool | None:
        """Every gold session found (a recall metric at 1); None for other metrics."""
        return self.value >= PASS if self.metric.startswith("recall") else None

    @property
    def label(self) -> str:
        """"run 7 name: config" (the config only when the run ranked several)."""
        return f"run {self.run_id}" + (f" {self.name}" if self.name else "") + f": {self.config}"


def of_file(runs: Iterable[Run], digest: str) -> list[Run]:
    """The runs that ranked the question file of SHA-256 `digest`, oldest first."""
    return sorted((r for r in runs if r.dataset_sha256 == digest), key=lambda r: (r.time, r.id))


def across_runs(runs: Sequence[Run], question_id: str, metric: str,
                names: Mapping[int, tuple[str, str]] | None = None) -> list[RunValue]:
    """The question's value in every run and config that scored it on `metric`, in the runs' order."""
    names = names or {}
    return [RunValue(r.id, r.time, r.kind, config, metric, float(per_q[question_id][metric]),
                     names.get(r.id, ("", ""))[0])
            for r in runs for config, per_q in r.results.items()
            if metric in per_q.get(question_id, {})]


def latest(runs: Sequence[Run], metric: str, prefer: str | None = None,
           names: Mapping[int, tuple[str, str]] | None = None) -> dict[str, RunValue]:
    """Question id -> its value in the newest run (of `runs`, oldest first) that scored it on
    `metric`: under config `prefer` when that run ranked it, else the run's first config."""
    names = names or {}
    out: dict[str, RunValue] = {}
    for r in reversed(runs):
        configs = sorted(r.results, key=lambda c: c != prefer)  # `prefer` first when the run ranked it
        for config in configs:
            for qid, values in r.results[config].items():
                if qid not in out and metric in values:
                    out[qid] = RunValue(r.id, r.time, r.kind, config, metric, float(values[metric]),
                                        names.get(r.id, ("", ""))[0])
    return out
