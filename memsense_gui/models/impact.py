"""The Impact view's per-query table: each query's top k under A and under B (SPEC §14).

Every figure is `core.evaluation.impact.QueryImpact`'s own (overlap@k, RBO, entered, left, the
memories that moved), read once per row when the impact is set; sorting uses the raw values.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.evaluation.impact import Impact, QueryImpact
from PySide6.QtCore import Qt

from memsense_gui.models.table import DISPLAY, TableModel

USER, QUERY, OVERLAP, RBO, CHANGED, ENTERED, LEFT, MOVED = range(8)
CHANGE_TEXT = {0: "no", 1: "order", 2: "set"}
"""Changed: 0 same order, 1 same set in another order, 2 another set."""


@dataclass(frozen=True)
class ImpactRow:
    query: QueryImpact
    overlap: float
    rbo: float
    change: int
    moved: tuple[tuple[str, int, int], ...]

    @classmethod
    def of(cls, q: QueryImpact) -> ImpactRow:
        return cls(q, q.overlap, q.rbo, 0 if q.same_order else 1 if q.same_set else 2, q.moved)


def move_text(memory_id: str, rank_a: int, rank_b: int) -> str:
    return f"{memory_id} {rank_a}→{rank_b}"


class ImpactModel(TableModel):
    """One row per query: user, query, overlap@k, RBO, changed, entered, left, biggest move."""

    HEADERS = ("User", "Query", "Overlap@k", "RBO", "Changed", "Entered", "Left", "Biggest move")
    HEADER_TIPS = {
        OVERLAP: "|A ∩ B| / k: the share of A's top k that B also returns (SPEC §14)",
        RBO: "Rank-biased overlap, p = 0.9 (Webber, Moffat and Zobel 2010), extrapolated to depth k: "
             "1 for the same list in the same order; changes at the top weigh most",
        CHANGED: "no: same list; order: same memories in another order; set: other memories",
        ENTERED: "Memories in B's top k and not in A's (count: ids)",
        LEFT: "Memories in A's top k and not in B's (count: ids)",
        MOVED: "The memory in both lists whose rank moved most (rank under A → under B); sorts by the move's size",
    }
    NUMERIC = frozenset({OVERLAP, RBO, ENTERED, LEFT})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[ImpactRow] = []
        self.k = 0

    def set_impact(self, impact: Impact | None) -> None:
        self.beginResetModel()
        self.rows = [ImpactRow.of(q) for q in impact.queries] if impact is not None else []
        self.k = impact.k if impact is not None else 0
        self._n = len(self.rows)
        self.endResetModel()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:  # noqa: N802
        value = super().headerData(section, orientation, role)
        if section == OVERLAP and isinstance(value, str) and self.k:
            return f"Overlap@{self.k}"
        return value

    def display(self, row: int, col: int) -> str | None:
        r = self.rows[row]
        q = r.query
        if col == USER:
            return q.user_id
        if col == QUERY:
            return q.query
        if col == OVERLAP:
            return f"{r.overlap:.2f}"
        if col == RBO:
            return f"{r.rbo:.3f}"
        if col == CHANGED:
            return CHANGE_TEXT[r.change]
        if col in (ENTERED, LEFT):
            ids = q.entered if col == ENTERED else q.left
            return f"{len(ids)}: {', '.join(ids)}" if ids else "0"
        return move_text(*r.moved[0]) if r.moved else ""

    def raw(self, row: int, col: int) -> Any:
        r = self.rows[row]
        if col == OVERLAP:
            return r.overlap
        if col == RBO:
            return r.rbo
        if col == CHANGED:
            return r.change
        if col == ENTERED:
            return len(r.query.entered)
        if col == LEFT:
            return len(r.query.left)
        if col == MOVED:
            return abs(r.moved[0][2] - r.moved[0][1]) if r.moved else 0
        return self.display(row, col)

    def tooltip(self, row: int, col: int) -> str | None:
        q = self.rows[row].query
        if col == MOVED and self.rows[row].moved:
            return "Moved (rank under A → under B): " + ", ".join(move_text(*m) for m in self.rows[row].moved)
        if col == QUERY:
            return f"A: {', '.join(q.a)}\nB: {', '.join(q.b)}"
        return None

    def query_at(self, row: int) -> QueryImpact:
        return self.rows[row].query
