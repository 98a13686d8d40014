"""The auto-tuner's trials, live: run, stage, train and test metric, and every knob searched."""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import QModelIndex

from core.evaluation.tune import ALL_KNOBS, Trial
from memsense_gui import theme
from memsense_gui.models.table import TableModel

KNOB_COLUMNS = tuple(k.name for k in ALL_KNOBS)


def knob_header(name: str) -> str:
    """A knob's column title: route weights as `w:route`."""
    return name.replace("route_weights.", "w:")


class TrialModel(TableModel):
    """One row per trial of every run (a search, or each fold of a cross-validation); every
    knob has its own column, so the table sorts by the objective or by any knob."""

    TRIAL, STAGE, TRAIN, TEST, RUN = range(5)
    HEADERS = ("trial", "stage", "train", "test", "run", *map(knob_header, KNOB_COLUMNS))
    NUMERIC = frozenset({TRIAL, TRAIN, TEST, *range(5, 5 + len(KNOB_COLUMNS))})
    HEADER_TIPS = {TRAIN: "The objective: the metric on the training users' questions",
                   TEST: "The metric on the held-out users' questions (not searched on)",
                   RUN: "The search the trial belongs to: the train/test split, or a fold of the cross-validation"}

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[tuple[str, Trial]] = []
        self.best: tuple[str, int] | None = None

    @property
    def trials(self) -> list[Trial]:
        return [t for _, t in self.rows]

    def set_trials(self, trials: Sequence[Trial], best: int | None = None, run: str = "search") -> None:
        self.set_rows([(run, t) for t in trials], None if best is None else (run, best))

    def set_rows(self, rows: Sequence[tuple[str, Trial]], best: tuple[str, int] | None = None) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.best = best
        self._n = len(self.rows)
        self.endResetModel()

    def add(self, rows: Sequence[tuple[str, Trial]]) -> None:
        """Trials just scored, appended."""
        if not rows:
            return
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows) + len(rows) - 1)
        self.rows.extend(rows)
        self._n = len(self.rows)
        self.endInsertRows()

    def set_best(self, best: tuple[str, int] | None) -> None:
        """Mark the best trial: only the rows of the old and the new best change."""
        before, self.best = self.best, best
        if before == best:
            return
        for row, (run, t) in enumerate(self.rows):
            if (run, t.number) in (before, best):
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))

    def raw(self, row: int, col: int) -> Any:
        run, t = self.rows[row]
        if col < 5:
            return (t.number, t.stage, t.train, t.test, run)[col]
        return float(ALL_KNOBS[col - 5].get(t.config))  # KNOB_COLUMNS are ALL_KNOBS' names, in order

    def display(self, row: int, col: int) -> str | None:
        value = self.raw(row, col)
        if col in (self.TRAIN, self.TEST):
            return "" if value is None else f"{value:.3f}"
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)

    def _is_best(self, row: int) -> bool:
        run, t = self.rows[row]
        return self.best == (run, t.number)

    def memory_id(self, row: int) -> None:
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        return "the best trial" if self._is_best(row) else None

    def foreground(self, row: int, col: int) -> None:
        return None

    def background(self, row: int, col: int) -> Any:
        return theme.current().qcolor("gold") if self._is_best(row) else None

    def font(self, row: int, col: int) -> None:
        return None
