"""The History view's tables: the runs kept beside the store, and two runs question by question.

Figures are core's: a run's mean of a metric per config (`Run.mean`), and the per-question
values of two runs (`core.evaluation.history.compare_runs`).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from PySide6.QtGui import QColor

from core.evaluation.history import Run, RunDiff
from memsense_gui.models.table import TableModel

RUN, NAME, KIND, TIME, DATASET, METRIC, SETTINGS = range(7)
QUESTION, VALUE_A, VALUE_B, CHANGE = range(4)
WIN, LOSS = QColor("#2ca02c"), QColor("#d62728")


def run_time(run: Run) -> str:
    return time_text(run.time)


def time_text(seconds: float) -> str:
    """A run's time as every view shows it, local."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


class RunsModel(TableModel):
    """One row per run: id, kind, time, the settings it ranked, the question file and its hash,
    and each config's mean of the chosen metric."""

    HEADERS = ("Run", "Name", "Kind", "Time", "Questions", "Metric", "Settings")
    HEADER_TIPS = {NAME: "The run's name (Name… gives one); its note in the cell's tooltip",
                   KIND: "What the run was (eval, tune, ...); a shared run's also names who made it",
                   DATASET: "The question file and the first 8 hex digits of its SHA-256 when the run was made",
                   METRIC: "The best config's mean of the chosen metric over the run's questions (every "
                           "config's in the cell's tooltip)"}
    NUMERIC = frozenset({RUN})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runs: list[Run] = []
        self.metric = ""
        self.names: dict[int, tuple[str, str]] = {}

    def set_runs(self, runs: Sequence[Run], metric: str, names: dict[int, tuple[str, str]] | None = None) -> None:
        self.beginResetModel()
        self.runs, self.metric, self.names = list(runs), metric, dict(names or {})
        self._n = len(self.runs)
        self.endResetModel()

    def set_metric(self, metric: str) -> None:
        self.metric = metric
        self._refresh_column(METRIC)

    def means(self, run: Run) -> list[tuple[str, float]]:
        return [(name, value) for name in run.configs if (value := run.mean(self.metric, name)) is not None]

    def display(self, row: int, col: int) -> str | None:
        run = self.runs[row]
        if col == RUN:
            return str(run.id)
        if col == NAME:
            return self.names.get(run.id, ("", ""))[0]
        if col == KIND:  # a shared run (core.evaluation.shared_runs) says who made it
            return f"{run.kind} · {run.made_by}" if run.made_by else run.kind
        if col == TIME:
            return run_time(run)
        if col == SETTINGS:
            return ", ".join(run.configs)
        if col == DATASET:
            return f"{Path(run.dataset).name} ({run.dataset_sha256[:8]})"
        means = self.means(run)
        if not means:
            return "–"
        name, value = max(means, key=lambda m: m[1])
        return f"{value:.3f} {name}" + (f" (best of {len(means)})" if len(means) > 1 else "")

    def raw(self, row: int, col: int) -> Any:
        run = self.runs[row]
        if col == RUN:
            return run.id
        if col == TIME:
            return run.time
        if col == METRIC:
            return max((v for _, v in self.means(run)), default=-1.0)
        return self.display(row, col)

    def tooltip(self, row: int, col: int) -> str | None:
        run = self.runs[row]
        if col == DATASET:
            return f"{run.dataset}\nSHA-256 {run.dataset_sha256}\nstore {run.store}\nmodel {run.model}"
        if col == METRIC:
            return "\n".join(f"{name}: {value:.3f}" for name, value in self.means(run)) or None
        if col == SETTINGS:
            return "\n".join(run.configs)
        if col == NAME:
            return self.names.get(run.id, ("", ""))[1] or None
        return None

    def run_at(self, row: int) -> Run:
        return self.runs[row]


class RunDiffModel(TableModel):
    """Two runs' values of one metric, question by question (the questions both scored)."""

    HEADERS = ("Question", "A", "B", "B − A")
    NUMERIC = frozenset({VALUE_A, VALUE_B, CHANGE})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: tuple[tuple[str, float, float], ...] = ()

    def set_diff(self, diff: RunDiff | None) -> None:
        self.beginResetModel()
        self.rows = diff.rows if diff is not None else ()
        self._n = len(self.rows)
        self.endResetModel()

    def display(self, row: int, col: int) -> str | None:
        q, a, b = self.rows[row]
        if col == QUESTION:
            return q
        if col == CHANGE:
            return f"{b - a:+.3f}" if b != a else ""
        return f"{a if col == VALUE_A else b:.3f}"

    def raw(self, row: int, col: int) -> Any:
        q, a, b = self.rows[row]
        return (q, a, b, b - a)[col]

    def foreground(self, row: int, col: int) -> QColor | None:
        _, a, b = self.rows[row]
        return None if col != CHANGE or a == b else WIN if b > a else LOSS
