"""Candidates × routes: the rank each route gave a candidate, coloured by strength."""
from __future__ import annotations

import math
from typing import Any, Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont

from core.rank.ranking import Ranking
from core.records import ROUTES
from memsense_gui import theme
from memsense_gui.models.format import ROUTE_SHORT, SNIPPET_TIP, is_gold, pool_rows, preview, text_on
from memsense_gui.models.pool import RANK_TIP, PoolRowsModel
from memsense_gui.models.table import DISPLAY, bold_font


class RouteMatrixModel(PoolRowsModel):
    """Candidates × the eight routes: each cell the route's rank, coloured by strength.

    Empty when the route missed the chunk; muted when found but not counted (beyond
    route_limit or weight 0). `RAW_ROLE` is the rank (0 = absent).
    """

    POOL_RANK, SNIPPET, CHUNK, FIRST_ROUTE = range(4)
    HEADERS = ("Pool #", "Snippet", "Chunk") + tuple(ROUTE_SHORT[r] for r in ROUTES)
    HEADER_TIPS = {POOL_RANK: RANK_TIP, SNIPPET: SNIPPET_TIP, **dict(zip(range(FIRST_ROUTE, FIRST_ROUTE + len(ROUTES)), ROUTES))}
    NUMERIC = frozenset({POOL_RANK, *range(FIRST_ROUTE, FIRST_ROUTE + len(ROUTES))})

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole
                and section >= self.FIRST_ROUTE and self.ranking is not None):
            route = ROUTES[section - self.FIRST_ROUTE]
            return f"{route}: weight {self.shown.config.weight(route):g}, counted down to rank {self.shown.config.route_limit}"
        return super().headerData(section, orientation, role)

    focused: str | None = None

    def set_focus(self, memory_id: str | None) -> None:
        """Mark one row (the chunk shown elsewhere) without a selection that hides the colours."""
        old = self.row_of(self.focused) if self.focused else None
        self.focused = memory_id
        for r in (old, self.row_of(memory_id) if memory_id else None):
            if r is not None:
                self.dataChanged.emit(self.index(r, 0), self.index(r, len(self.HEADERS) - 1))

    def is_focused(self, row: int) -> bool:
        return self.focused is not None and self.memory_id(row) == self.focused

    def font(self, row: int, col: int) -> QFont | None:
        return bold_font() if col < self.FIRST_ROUTE and self.is_focused(row) else None

    def set_ranking(self, ranking: Ranking | None, gold: Iterable[str] = (), pins: Iterable[str] = ()) -> None:
        gold, pins = frozenset(gold), frozenset(pins)
        if ranking is not None and self._same_cells(ranking, gold, pins):
            self.ranking, self._records = ranking, {}  # tooltips read it; every cell shows what it showed
            return
        super().set_ranking(ranking, gold, pins)
        # plain lists and a colour cache: painting asks for every visible cell on every tick
        self._ranks = ranking.pool.ranks[self._rows].tolist() if ranking is not None else []
        self._live = ranking.live[self._rows].tolist() if ranking is not None else []
        self._limit_log = math.log(max(ranking.config.route_limit, 2) + 1) if ranking is not None else 1.0
        self._colors: dict[tuple[bool, int], tuple[QColor, QColor]] = {}

    def _same_cells(self, ranking: Ranking, gold: frozenset[str], pins: frozenset[str]) -> bool:
        """Whether `ranking` shows every cell as the ranking on screen does (same pool, rows, ranks,
        counted routes, colour scale, gold and pins): a knob such as MMR's lambda moves the results
        but not the route ranks, and repainting the matrix was half of a slider change's painting."""
        shown = self.ranking
        if shown is None or ranking.pool is not shown.pool or gold != self._gold or pins != self._pins:
            return False
        if len(ranking.candidates) != self._cands or ranking.config.route_limit != shown.config.route_limit:
            return False
        rows = pool_rows(ranking)
        return rows == self._rows and ranking.live[rows].tolist() == self._live

    def refresh(self) -> None:
        self._colors = {}
        super().refresh()

    def _rank(self, row: int, col: int) -> int:
        return self._ranks[row][col - self.FIRST_ROUTE]

    def display(self, row: int, col: int) -> str | None:
        if col == self.POOL_RANK:
            rank = self.pool_rank(row)
            return "fetched" if rank is None else str(rank)
        if col == self.SNIPPET:
            return self.snippet(row)
        if col == self.CHUNK:
            return self._label(row)
        rank = self._rank(row, col)
        return str(rank) if rank else ""

    def raw(self, row: int, col: int) -> Any:
        if col == self.POOL_RANK:
            return self.pool_rank(row)
        if col == self.SNIPPET:
            return self.snippet(row)
        return self.memory_id(row) if col == self.CHUNK else self._rank(row, col)

    def counted(self, row: int, col: int) -> bool:
        return self._live[row][col - self.FIRST_ROUTE]

    def strength(self, row: int, col: int) -> float:
        """1 for rank 1, falling with log rank to 0 at route_limit; 0 when absent."""
        rank = self._rank(row, col)
        if not rank:
            return 0.0
        return max(0.0, 1.0 - math.log(rank) / self._limit_log)

    def _cell_colors(self, row: int, col: int) -> tuple[QColor, QColor] | None:
        """(background, text) of a found cell, from a cache of 65 strength steps."""
        if not self._rank(row, col):
            return None
        counted = self.counted(row, col)
        key = (counted, round(self.strength(row, col) * 64) if counted else 0)
        colors = self._colors.get(key)
        if colors is None:
            t = theme.current()
            if counted:
                bg = theme.blend(t.base, t.accent, 0.12 + 0.88 * key[1] / 64)
                colors = (bg, text_on(bg))
            else:
                colors = (theme.blend(t.base, t.muted, 0.25), t.qcolor("muted"))
            self._colors[key] = colors
        return colors

    def background(self, row: int, col: int) -> QColor | None:
        if col < self.FIRST_ROUTE:
            if self.is_focused(row):
                return theme.current().qcolor("highlight")
            return theme.current().qcolor("gold") if is_gold(self.chunk(row), self._gold) else None
        colors = self._cell_colors(row, col)
        return colors[0] if colors else None

    def foreground(self, row: int, col: int) -> QColor | None:
        if col < self.FIRST_ROUTE:
            return QColor("#ffffff") if self.is_focused(row) else None
        colors = self._cell_colors(row, col)
        return colors[1] if colors else None

    def tooltip(self, row: int, col: int) -> str | None:
        if col < self.FIRST_ROUTE:
            return f"{self.memory_id(row)}\n{preview(self.chunk(row), 400)}" if col == self.SNIPPET else self.memory_id(row)
        j = col - self.FIRST_ROUTE
        route = ROUTES[j]
        i = self._rows[row]
        rank = self._rank(row, col)
        if not rank:
            return f"{route}: not found"
        raw = float(self.shown.pool.scores[i, j])
        contrib = float(self.shown.contributions[i, j])
        state = "counted" if self.counted(row, col) else "not counted (beyond route_limit or weight 0)"
        return f"{route}: rank {rank}, raw score {raw:.4f}, RRF contribution {contrib:.4f}, {state}"
