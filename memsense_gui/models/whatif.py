""""What would it take": the verified single-knob changes that return a chunk, one per row."""
from __future__ import annotations

from typing import Any

from core.rank.glossary import WHATIF_GLOSSARY
from core.rank.whatif import Change, WhatIf
from memsense_gui.models.format import short_id
from memsense_gui.models.table import TableModel


class WhatIfModel(TableModel):
    """One verified change per row: the knob, its current and new value, the rank the chunk
    gets, and the results it pushes out (`core.rank.whatif`)."""

    KNOB, FROM, TO, RANK, PUSHES = range(5)
    HEADERS = tuple(t.label for t in WHATIF_GLOSSARY)
    HEADER_TIPS = {c: t.tooltip() for c, t in enumerate(WHATIF_GLOSSARY)}
    NUMERIC = frozenset({FROM, TO, RANK})

    def __init__(self, parent=None):
        super().__init__(parent)
        self._changes: tuple[Change, ...] = ()
        self._user = ""
        self.answer: WhatIf | None = None

    def set_answer(self, answer: WhatIf | None, user_id: str = "") -> None:
        self.beginResetModel()
        self.answer = answer
        self._changes = answer.changes if answer is not None else ()
        self._user = user_id
        self._n = len(self._changes)
        self.endResetModel()

    def change(self, row: int) -> Change:
        return self._changes[row]

    def display(self, row: int, col: int) -> str | None:
        c = self._changes[row]
        if col == self.KNOB:
            return c.knob
        if col == self.FROM:
            return f"{c.current:g}"
        if col == self.TO:
            return f"{c.value:g}"
        if col == self.RANK:
            return str(c.rank)
        return ", ".join(short_id(m, self._user) for m in c.pushes_out) or "nothing"

    def raw(self, row: int, col: int) -> Any:
        c = self._changes[row]
        return {self.FROM: c.current, self.TO: c.value, self.RANK: c.rank}.get(col, self.display(row, col))

    def tooltip(self, row: int, col: int) -> str | None:
        return self._changes[row].describe()
