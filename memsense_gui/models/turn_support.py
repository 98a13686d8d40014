"""The turns of one session found in the candidate pool, and the turn-support formula with its numbers."""
from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFont

from core.rank.ranking import Ranking, Row
from core.records import ROUTES
from memsense_gui.models.format import fmt, preview, routes_text, short_id
from memsense_gui.models.table import TableModel, bold_font, on_screen, term_headers, term_tips


class TurnSupportModel(TableModel):
    """The turn chunks of one session found in the candidate pool, best first."""

    TURN, POOL_RANK, RRF, ROUTES, BEST = range(5)
    TERMS = {POOL_RANK: "pool_rank", RRF: "session_rrf_score", ROUTES: "routes"}
    """Columns headed by a record term (`core.rank.glossary`): each turn's own values."""
    HEADERS = term_headers(("Turn", "", "", "", "Best"), TERMS)
    HEADER_TIPS = term_tips(TERMS)
    NUMERIC = frozenset({POOL_RANK, RRF})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self.row: Row | None = None
        self._turns: list[tuple[int, int]] = []  # (pool row, pool rank)

    @property
    def shown(self) -> Ranking:
        """The ranking on screen (rows are read only while there is one)."""
        return on_screen(self.ranking)

    def set_row(self, ranking: Ranking | None, row: Row | None) -> None:
        self.beginResetModel()
        self.ranking, self.row = ranking, row
        self._turns = []
        if ranking is not None and row is not None:
            session = ranking.pool.chunks[row.index].session_id
            for rank, i in enumerate(ranking.candidates, start=1):
                c = ranking.pool.chunks[int(i)]
                if c.kind == "turn" and c.session_id == session:
                    self._turns.append((int(i), rank))
        self._n = len(self._turns)
        self.endResetModel()

    def summary(self) -> str:
        """The formula with this row's numbers."""
        if self.row is None or self.ranking is None:
            return "Select a session result to see the turns that support it."
        cfg = self.shown.config
        if not self.row.supporting_turn_count:
            return "No turn of this session is in the candidate pool: turn support 0."
        best = float(self.shown.fused[on_screen(self.row).best_turn])
        return (f"Turn support = min(cap {cfg.turn_support_cap:g}, factor {cfg.turn_support_factor:g} × Best turn RRF "
                f"{best:.4f}) = <b>{self.row.turn_support:.4f}</b> · {self.row.supporting_turn_count} supporting "
                f"turn(s) · best turn routes: {', '.join(self.row.best_turn_routes) or '—'}")

    def memory_id(self, row: int) -> str:
        return self.shown.pool.chunks[self._turns[row][0]].memory_id

    def display(self, row: int, col: int) -> str | None:
        i, rank = self._turns[row]
        c = self.shown.pool.chunks[i]
        if col == self.TURN:
            return short_id(c.memory_id, c.user_id)
        if col == self.POOL_RANK:
            return str(rank)
        if col == self.RRF:
            return fmt(float(self.shown.fused[i]))
        if col == self.ROUTES:
            return routes_text(r for j, r in enumerate(ROUTES) if self.shown.live[i, j])
        return "★ best" if i == on_screen(self.row).best_turn else ""

    def raw(self, row: int, col: int) -> Any:
        i, rank = self._turns[row]
        if col == self.POOL_RANK:
            return rank
        if col == self.RRF:
            return float(self.shown.fused[i])
        if col == self.BEST:
            return i == on_screen(self.row).best_turn
        return self.display(row, col)

    def tooltip(self, row: int, col: int) -> str | None:
        return preview(self.shown.pool.chunks[self._turns[row][0]], 600)

    def font(self, row: int, col: int) -> QFont | None:
        return bold_font() if self._turns[row][0] == on_screen(self.row).best_turn else None
