"""Pinned chunks and their fate, recomputed for every ranking (the why-not answer)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from PySide6.QtGui import QColor

from core.rank.explain import Fate
from core.rank.ranking import Ranking
from memsense_gui.models.format import fate_color, fate_label, short_id
from memsense_gui.models.table import TableModel


class PinsModel(TableModel):
    """Pinned chunks and their fate, recomputed for every ranking (the "why not" answer)."""

    CHUNK, STATUS, RANK, REASON = range(4)
    HEADERS = ("Pinned chunk", "Fate", "Rank", "Why")
    NUMERIC = frozenset({RANK})

    def __init__(self, parent=None):
        super().__init__(parent)
        self._pins: tuple[str, ...] = ()
        self._fates: list[Fate | None] = []
        self._user = ""
        self.fate_of: Callable[[Ranking, str], Fate] = Ranking.fate
        """How a pin's fate is read (the window's: `QuerySession.fate`, never deepening on the UI thread)."""

    def set_pins(self, pins: Sequence[str], ranking: Ranking | None) -> None:
        self.beginResetModel()
        self._pins = tuple(pins)
        self._fates = [self.fate_of(ranking, p) if ranking is not None else None for p in self._pins]
        self._user = ranking.pool.user_id if ranking is not None else ""
        self._n = len(self._pins)
        self.endResetModel()

    @property
    def user_id(self) -> str:
        return self._user

    def fate(self, row: int) -> Fate | None:
        return self._fates[row]

    def memory_id(self, row: int) -> str:
        return self._pins[row]

    def display(self, row: int, col: int) -> str | None:
        f = self._fates[row]
        if col == self.CHUNK:
            return short_id(self._pins[row], self._user)
        if f is None:
            return ""
        if col == self.STATUS:
            return fate_label(f, self._user)
        if col == self.RANK:
            return str(f.rank) if f.rank else ""
        return f.reason

    def raw(self, row: int, col: int) -> Any:
        f = self._fates[row]
        if col == self.STATUS:
            return f.status if f else None
        if col == self.RANK:
            return f.rank if f else None
        return self.display(row, col)

    def foreground(self, row: int, col: int) -> QColor | None:
        f = self._fates[row]
        return fate_color(f.status) if f is not None and col == self.STATUS else None

    def tooltip(self, row: int, col: int) -> str | None:
        f = self._fates[row]
        return f.reason if f else None
