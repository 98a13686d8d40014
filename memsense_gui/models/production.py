"""Production beside the reproduction: the live service's results next to the app's, one row
per position, each marked as matching (same id, same place, same final_score to 1e-6) or not,
with the reason when one can be told (core.recall.memsense.service)."""
from __future__ import annotations

from PySide6.QtGui import QColor

from core.recall.memsense.service import Comparison
from memsense_gui import theme
from memsense_gui.models.format import short_id
from memsense_gui.models.table import TableModel, on_screen


class ProductionModel(TableModel):
    RANK, PROD, PROD_FINAL, MATCH, OURS, OURS_FINAL, REASON = range(7)
    HEADERS = ("#", "production", "final", "", "reproduction", "final", "why they differ")
    HEADER_TIPS = {1: "What the Memsense service returned (POST /v1/memory/search)",
                   3: "= same chunk, same place, same final_score (to 1e-6); ≠ otherwise",
                   4: "What this app computes from the same database with the current settings"}
    NUMERIC = frozenset({RANK, PROD_FINAL, OURS_FINAL})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.comparison: Comparison | None = None
        self.user = ""

    def set_comparison(self, comparison: Comparison | None, user: str = "") -> None:
        self.beginResetModel()
        self.comparison, self.user = comparison, user
        self._n = len(comparison.lines) if comparison else 0
        self.endResetModel()

    def memory_id(self, row: int) -> str | None:
        line = on_screen(self.comparison).lines[row]
        return line.reproduction_id or line.production_id

    def display(self, row: int, col: int) -> str | None:
        line = on_screen(self.comparison).lines[row]
        return {
            self.RANK: str(line.position),
            self.PROD: short_id(line.production_id, self.user) or "—",
            self.PROD_FINAL: "" if line.production_score is None else f"{line.production_score:.6f}",
            self.MATCH: "=" if line.matches else "≠",
            self.OURS: short_id(line.reproduction_id, self.user) or "—",
            self.OURS_FINAL: "" if line.reproduction_score is None else f"{line.reproduction_score:.6f}",
            self.REASON: line.reason,
        }[col]

    def raw(self, row: int, col: int):
        line = on_screen(self.comparison).lines[row]
        if col == self.PROD_FINAL:
            return line.production_score
        if col == self.OURS_FINAL:
            return line.reproduction_score
        return self.display(row, col)

    def tooltip(self, row: int, col: int) -> str | None:
        line = on_screen(self.comparison).lines[row]
        return line.reason or "same chunk, same place, same final_score"

    def foreground(self, row: int, col: int) -> QColor | None:
        if col == self.MATCH:
            return theme.current().qcolor("up" if on_screen(self.comparison).lines[row].matches else "down")
        return None
