""""What would it take": the verified single-knob changes that return a chunk, one per row."""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtGui import QColor

from core.evaluation.fix import FixCandidate, candidate_order
from core.rank.glossary import WHATIF_GLOSSARY
from core.rank.whatif import Change, WhatIf
from memsense_gui import theme
from memsense_gui.models.format import short_id
from memsense_gui.models.table import TableModel


class WhatIfModel(TableModel):
    """One verified change per row: the knob, its current and new value, the rank the chunk
    gets, the results it pushes out (`core.rank.whatif`), and once judged on a question set, what
    it does there (`core.evaluation.fix.judge`): the rows then follow SPEC §16's order, harmful last."""

    KNOB, FROM, TO, RANK, PUSHES, SET = range(6)
    HEADERS = tuple(t.label for t in WHATIF_GLOSSARY)
    HEADER_TIPS = {c: t.tooltip() for c, t in enumerate(WHATIF_GLOSSARY)}
    NUMERIC = frozenset({FROM, TO, RANK})

    def __init__(self, parent=None):
        super().__init__(parent)
        self._changes: tuple[Change, ...] = ()
        self._user = ""
        self.answer: WhatIf | None = None
        self._effects: tuple[FixCandidate, ...] | None = None

    def set_answer(self, answer: WhatIf | None, user_id: str = "") -> None:
        self.beginResetModel()
        self.answer = answer
        self._changes = answer.changes if answer is not None else ()
        self._effects = None
        self._user = user_id
        self._n = len(self._changes)
        self.endResetModel()

    def set_effects(self, effects: Sequence[FixCandidate]) -> None:
        """Each change's effect on the question set (in the order of `changes`): the rows re-ordered by it."""
        if len(effects) != len(self._changes):
            return
        self.beginResetModel()
        order = sorted(range(len(effects)), key=lambda i: (candidate_order(effects[i]), i))
        self._changes = tuple(self._changes[i] for i in order)
        self._effects = tuple(effects[i] for i in order)
        self.endResetModel()

    def effect(self, row: int) -> FixCandidate | None:
        return self._effects[row] if self._effects is not None else None

    @property
    def harmful(self) -> int:
        return sum(e.harmful for e in self._effects or ())

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
        if col == self.SET:
            e = self.effect(row)
            if e is None:
                return "—"
            return f"{e.metric_before:.3f} → {e.metric_after:.3f}{' harmful' if e.harmful else ''}"
        return ", ".join(short_id(m, self._user) for m in c.pushes_out) or "nothing"

    def raw(self, row: int, col: int) -> Any:
        c = self._changes[row]
        return {self.FROM: c.current, self.TO: c.value, self.RANK: c.rank}.get(col, self.display(row, col))

    def tooltip(self, row: int, col: int) -> str | None:
        e = self.effect(row)
        if e is None:
            return self._changes[row].describe()
        on_set = e.harm_text() or (f"on the question set: {e.metric_before:.3f} → {e.metric_after:.3f} "
                                   f"(p {e.p_value:.3g}), net {e.net:+d}")
        return f"{self._changes[row].describe()}\n{on_set}"

    def foreground(self, row: int, col: int) -> QColor | None:
        e = self.effect(row)
        if col != self.SET or e is None or e.metric_after == e.metric_before:
            return None
        return theme.current().qcolor("up" if e.metric_after > e.metric_before else "down")
