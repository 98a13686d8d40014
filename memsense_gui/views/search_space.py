"""The auto-tune's search space as a table: lock a knob at its current value, or set its range.

One row per knob searched (`core.evaluation.tune`): a lock box, the knob, the min and max of
its range (editable, the declared tuning range by default) and its value in the settings on
screen (what a lock holds it at). `space()` checks the choices through
`core.evaluation.space.search_space` (one line naming the knob and the fix when one is bad).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.space import SearchSpace, search_space
from core.evaluation.tune import Knob


class SearchSpaceEditor(QWidget):
    """Lock and range of every knob the auto-tune searches."""

    LOCK, KNOB, MIN, MAX, NOW = range(5)

    def __init__(self, current: Callable[[], Config] = Config, parent: QWidget | None = None):
        super().__init__(parent)
        self.current = current
        self.knobs: tuple[Knob, ...] = ()
        self.table = QTableWidget(0, 5)
        self.table.setObjectName("search-space")
        tips = ("Locked: kept at its value in the settings on screen", "", "The lowest value searched (double-click "
                "to edit)", "The highest value searched (double-click to edit)", "The knob in the settings on screen")
        for col, (title, tip) in enumerate(zip(("lock", "knob", "min", "max", "now"), tips)):
            head = QTableWidgetItem(title)
            head.setToolTip(tip)
            self.table.setHorizontalHeaderItem(col, head)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.KNOB, QHeaderView.ResizeMode.Stretch)
        self.reset_button = QPushButton("Default ranges")
        self.reset_button.setToolTip("Unlock every knob and give each its declared range back")
        self.reset_button.clicked.connect(lambda: self.set_knobs(self.knobs))
        self.summary = QLabel()
        row = QHBoxLayout()
        row.addWidget(self.summary, 1)
        row.addWidget(self.reset_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)
        self.table.itemChanged.connect(lambda *_: self._summarise())

    def set_knobs(self, knobs: Sequence[Knob]) -> None:
        """List `knobs`, unlocked, each over its declared range."""
        self.knobs = tuple(knobs)
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.knobs))
        for r, knob in enumerate(self.knobs):
            lock = QTableWidgetItem()
            lock.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            lock.setCheckState(Qt.CheckState.Unchecked)
            self.table.setItem(r, self.LOCK, lock)
            name = QTableWidgetItem(knob.name)
            name.setFlags(Qt.ItemFlag.ItemIsEnabled)
            lo, hi = knob.legal
            name.setToolTip(f"may take {lo:g} to {hi:g}{'; searched on a log scale' if knob.log else ''}")
            self.table.setItem(r, self.KNOB, name)
            for col, value in ((self.MIN, knob.low), (self.MAX, knob.high)):
                self.table.setItem(r, col, QTableWidgetItem(f"{value:g}"))
        self.table.blockSignals(False)
        self.refresh_current()

    def refresh_current(self) -> None:
        """The "now" column: each knob in the settings on screen."""
        cfg = self.current()
        self.table.blockSignals(True)
        for r, knob in enumerate(self.knobs):
            item = QTableWidgetItem(f"{knob.get(cfg):g}")
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.table.setItem(r, self.NOW, item)
        self.table.blockSignals(False)
        self._summarise()

    def _item(self, row: int, col: int) -> QTableWidgetItem:
        item = self.table.item(row, col)
        assert item is not None  # every cell is filled by set_knobs
        return item

    def row(self, name: str) -> int:
        return next(r for r, k in enumerate(self.knobs) if k.name == name)

    def lock(self, name: str, on: bool = True) -> None:
        self._item(self.row(name), self.LOCK).setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def set_range(self, name: str, low: float, high: float) -> None:
        r = self.row(name)
        self._item(r, self.MIN).setText(f"{low:g}")
        self._item(r, self.MAX).setText(f"{high:g}")

    def locked(self) -> list[str]:
        return [k.name for r, k in enumerate(self.knobs)
                if self._item(r, self.LOCK).checkState() == Qt.CheckState.Checked]

    def space(self) -> SearchSpace:
        """The choices, checked (MemsenseError naming the knob and the fix when one is bad)."""
        cfg = self.current()
        locked = set(self.locked())
        ranges = {k.name: (self._number(r, self.MIN, k), self._number(r, self.MAX, k))
                  for r, k in enumerate(self.knobs) if k.name not in locked}
        return search_space(self.knobs, {k.name: k.get(cfg) for k in self.knobs if k.name in locked}, ranges)

    def _number(self, row: int, col: int, knob: Knob) -> float:
        text = self._item(row, col).text().strip()
        try:
            value = float(text)
        except ValueError:
            raise MemsenseError(f"the {'min' if col == self.MIN else 'max'} of {knob.name}, {text!r}, is not a "
                                "number; type one") from None
        return value if math.isfinite(value) else math.nan

    def _summarise(self) -> None:
        n = len(self.locked())
        self.summary.setText(f"{len(self.knobs) - n} of {len(self.knobs)} knobs searched"
                             + (f", {n} locked at their value now" if n else ""))
