"""The auto-tuner's trials, live: run, stage, train and test metric, and every knob searched.

Unlike the other tables, this one is held in Qt's own item model (`QStandardItemModel`), not
answered from Python: it fills while a search runs on another thread of this process, and a
Python model answers each role of each painted cell under the interpreter's lock, which that
search needs all the time. Measured with `tools/bench_question_set.py`'s app (760 LoCoMo dev
questions, 200 trials): in three alternating runs the Python model cost 16-28% of the trial rate
the same run reached with no table; with this one, the GUI thread's CPU a trial fell from 7.4 ms
to 2.1 ms, and the table no longer changes the trial rate.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

from core.evaluation.tune import ALL_KNOBS, Trial
from memsense_gui import theme
from memsense_gui.models.table import RAW_ROLE, RIGHT_ALIGNED, header_tip

KNOB_COLUMNS = tuple(k.name for k in ALL_KNOBS)
BEST_TIP = "the best trial"
_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_BACKGROUND = Qt.ItemDataRole.BackgroundRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole


def knob_header(name: str) -> str:
    """A knob's column title: route weights as `w:route`."""
    return name.replace("route_weights.", "w:")


class TrialModel(QStandardItemModel):
    """One row per trial of every run (a search, or each fold of a cross-validation); every
    knob has its own column, so the table sorts by the objective or by any knob (`RAW_ROLE`)."""

    TRIAL, STAGE, TRAIN, TEST, RUN = range(5)
    HEADERS = ("trial", "stage", "train", "test", "run", *map(knob_header, KNOB_COLUMNS))
    NUMERIC = frozenset({TRIAL, TRAIN, TEST, *range(5, 5 + len(KNOB_COLUMNS))})
    HEADER_TIPS = {TRAIN: "The objective: the metric on the training users' questions",
                   TEST: "The metric on the held-out users' questions (not searched on)",
                   RUN: "The search the trial belongs to: the train/test split, or a fold of the cross-validation"}

    def __init__(self, parent=None):
        super().__init__(0, len(self.HEADERS), parent)
        self.rows: list[tuple[str, Trial]] = []
        self.best: tuple[str, int] | None = None
        for col, name in enumerate(self.HEADERS):
            item = QStandardItem(name)
            item.setToolTip(header_tip(self.HEADER_TIPS.get(col)))
            self.setHorizontalHeaderItem(col, item)
        theme.on_change(self._theme_changed)

    @property
    def trials(self) -> list[Trial]:
        return [t for _, t in self.rows]

    def set_trials(self, trials: Sequence[Trial], best: int | None = None, run: str = "search") -> None:
        self.set_rows([(run, t) for t in trials], None if best is None else (run, best))

    def set_rows(self, rows: Sequence[tuple[str, Trial]], best: tuple[str, int] | None = None) -> None:
        """Replace every row: one reset the views follow, not a signal per row."""
        self.beginResetModel()
        blocked = self.blockSignals(True)  # the reset tells the views; the item calls below would tell them row by row
        try:
            self.setRowCount(0)
            self.rows, self.best = [], None
            self.add(rows)
            self._mark(best)
        finally:
            self.blockSignals(blocked)
            self.endResetModel()

    def add(self, rows: Sequence[tuple[str, Trial]]) -> None:
        """Trials just scored, appended."""
        for run, t in rows:
            self.rows.append((run, t))
            self.appendRow(self._items(run, t))

    def set_best(self, best: tuple[str, int] | None) -> None:
        """Mark the best trial: only the rows of the old and the new best change."""
        for row in self._mark(best):
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))

    def _mark(self, best: tuple[str, int] | None) -> list[int]:
        """Colour the best trial's row and clear the old best's, quietly; the rows changed."""
        before, self.best = self.best, best
        if before == best:
            return []
        changed = [row for row, (run, t) in enumerate(self.rows) if (run, t.number) in (before, best)]
        blocked = self.blockSignals(True)  # one dataChanged a row (`set_best`), not one per cell
        try:
            for row in changed:
                self._paint_row(row)
        finally:
            self.blockSignals(blocked)
        return changed

    def _paint_row(self, row: int) -> None:
        run, t = self.rows[row]
        best = self.best == (run, t.number)
        colour = theme.current().qcolor("gold") if best else None
        for col in range(len(self.HEADERS)):
            item = self.item(row, col)
            item.setData(colour, _BACKGROUND)
            item.setData(BEST_TIP if best else None, _TOOLTIP)

    def _theme_changed(self, *_: Any) -> None:
        best, self.best = self.best, None  # marked afresh, in the new theme's colour
        self.set_best(best)

    def _items(self, run: str, t: Trial) -> list[QStandardItem]:
        out = []
        for col in range(len(self.HEADERS)):
            value = _raw(run, t, col)
            item = QStandardItem(_display(col, value))
            item.setData(value, RAW_ROLE)
            if col in self.NUMERIC:
                item.setData(RIGHT_ALIGNED, _ALIGN)
            item.setEditable(False)
            out.append(item)
        return out


def _raw(run: str, t: Trial, col: int) -> Any:
    """A cell's value, as sorted and plotted."""
    if col < 5:
        return (t.number, t.stage, t.train, t.test, run)[col]
    return float(ALL_KNOBS[col - 5].get(t.config))  # KNOB_COLUMNS are ALL_KNOBS' names, in order


def _display(col: int, value: Any) -> str:
    if col in (TrialModel.TRAIN, TrialModel.TEST):
        return "" if value is None else f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
