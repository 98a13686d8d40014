"""Two rankings of the same pool side by side, with each result's rank under the other."""
from __future__ import annotations

from typing import Any, Iterable

from PySide6.QtGui import QColor

from core.rank.ranking import Ranking
from core.records import Chunk
from memsense_gui import theme
from memsense_gui.models.format import fmt, is_gold, movement_text, short_id
from memsense_gui.models.table import TableModel, on_screen


class CompareModel(TableModel):
    """Two rankings of the same pool side by side, with each result's rank under the other."""

    RANK, A_CHUNK, A_FINAL, A_TO_B, B_CHUNK, B_FINAL, B_FROM_A = range(7)
    HEADERS = ("#", "A: chunk", "A final", "A → in B", "B: chunk", "B final", "B moved")
    HEADER_TIPS = {3: "Where A's result ranks under B ('out' = not returned by B)",
                   6: "How far B's result moved from its rank under A (new = not returned by A)"}
    NUMERIC = frozenset({RANK, A_FINAL, B_FINAL})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.a: Ranking | None = None
        self.b: Ranking | None = None
        self._gold: frozenset[str] = frozenset()

    def set_rankings(self, a: Ranking | None, b: Ranking | None, gold: Iterable[str] = ()) -> None:
        self.beginResetModel()
        self.a, self.b = a, b
        self._gold = frozenset(gold)
        self._a_ids = a.result_ids if a else []
        self._b_ids = b.result_ids if b else []
        self._n = max(len(self._a_ids), len(self._b_ids))
        self.endResetModel()

    def memory_id(self, row: int) -> str | None:
        return self._a_ids[row] if row < len(self._a_ids) else None

    def _chunk(self, ranking: Ranking, memory_id: str) -> Chunk:
        i = ranking.pool.index_of(memory_id)
        if i is None:  # the ids shown are the ranking's own results
            raise LookupError(f"{memory_id} is not in the pool")
        return ranking.pool.chunks[i]

    def _label(self, ranking: Ranking, memory_id: str) -> str:
        c = self._chunk(ranking, memory_id)
        return ("★ " if is_gold(c, self._gold) else "") + short_id(memory_id, c.user_id)

    def display(self, row: int, col: int) -> str | None:
        if col == self.RANK:
            return str(row + 1)
        side, ids, other_ids = (self.a, self._a_ids, self._b_ids) if col <= self.A_TO_B else (self.b, self._b_ids, self._a_ids)
        if row >= len(ids):
            return ""
        mid = ids[row]
        if col in (self.A_CHUNK, self.B_CHUNK):
            return self._label(on_screen(side), mid)
        if col in (self.A_FINAL, self.B_FINAL):
            ranking = on_screen(side)
            return fmt(ranking.rows[ranking.selection.order[row]].final_score)
        if col == self.A_TO_B:
            return f"#{other_ids.index(mid) + 1}" if mid in other_ids else "out"
        prev = other_ids.index(mid) + 1 if mid in other_ids else None
        return movement_text(prev, row + 1, True)[0]

    def raw(self, row: int, col: int) -> Any:
        if col == self.B_FROM_A and row < len(self._b_ids):
            mid = self._b_ids[row]
            return (self._a_ids.index(mid) + 1 - (row + 1)) if mid in self._a_ids else None
        if col == self.A_TO_B and row < len(self._a_ids):
            mid = self._a_ids[row]
            return self._b_ids.index(mid) + 1 if mid in self._b_ids else None
        return self.display(row, col)

    def foreground(self, row: int, col: int) -> QColor | None:
        t = theme.current()
        text = self.display(row, col)
        if col == self.B_FROM_A and text:
            return t.qcolor("up") if text[0] == "▲" else t.qcolor("down") if text[0] == "▼" else (
                t.qcolor("accent") if text == "new" else None)
        if col == self.A_TO_B and text == "out":
            return t.qcolor("down")
        return None

    def background(self, row: int, col: int) -> QColor | None:
        side, ids = (self.a, self._a_ids) if col <= self.A_TO_B else (self.b, self._b_ids)
        if col != self.RANK and row < len(ids) and is_gold(self._chunk(on_screen(side), ids[row]), self._gold):
            return theme.current().qcolor("gold")
        return None
