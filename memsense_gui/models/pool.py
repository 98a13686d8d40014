"""The candidate pool: every candidate (not only top k) with its fate; the base of the route matrix."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from PySide6.QtGui import QColor

from core.rank.explain import Fate
from core.rank.ranking import Ranking
from core.recall.snippet import chunk_snippet
from core.records import ROUTES, Chunk
from memsense_gui import theme
from memsense_gui.models.format import (
    GRADE_TIP, PIN_MARK, SNIPPET_TIP, fate_color, fate_label, fmt, grade_text, is_gold, pool_rows, preview, routes_text, short_id,
)
from memsense_gui.models.table import TableModel, on_screen


RANK_TIP = "Place in the candidate pool by fused score; 'fetched' = a session brought in by its turns"


class PoolRowsModel(TableModel):
    """Rows of the candidate pool in pool order, with each row's place and snippet (the
    snippets are worked out when first shown, once per pool: they depend on the query only)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self._rows: list[int] = []
        self._gold: frozenset[str] = frozenset()
        self._pins: frozenset[str] = frozenset()
        self._cands = 0
        self._snippets: dict[str, str] = {}
        self._snippet_pool = None
        self.fate_of: Callable[[Ranking, str], Fate] = Ranking.fate
        """How a row's fate is read (the window's: `QuerySession.fate`, never deepening on the UI thread)."""

    @property
    def shown(self) -> Ranking:
        """The ranking on screen (rows are read only while there is one)."""
        return on_screen(self.ranking)

    def set_ranking(self, ranking: Ranking | None, gold: Iterable[str] = (), pins: Iterable[str] = ()) -> None:
        self.beginResetModel()
        self.ranking = ranking
        if ranking is None or ranking.pool is not self._snippet_pool:
            self._snippets = {}
            self._snippet_pool = ranking.pool if ranking is not None else None
        self._cands = len(ranking.candidates) if ranking is not None else 0
        self._rows = pool_rows(ranking) if ranking is not None else []
        self._gold = frozenset(gold)
        self._pins = frozenset(pins)
        self._fates: dict[int, Fate] = {}
        self._n = len(self._rows)
        self.endResetModel()

    def chunk(self, row: int) -> Chunk:
        return self.shown.pool.chunks[self._rows[row]]

    def memory_id(self, row: int) -> str:
        return self.chunk(row).memory_id

    def pool_index(self, row: int) -> int:
        return self._rows[row]

    def fate(self, row: int) -> Fate:
        if row not in self._fates:
            self._fates[row] = self.fate_of(self.shown, self.memory_id(row))
        return self._fates[row]

    def pool_rank(self, row: int) -> int | None:
        """1-based place in the candidate pool (None: a session fetched for its turns)."""
        return row + 1 if row < self._cands else None

    def snippet(self, row: int) -> str:
        """The best-matching sentence, query words in «»."""
        mid = self.memory_id(row)
        if mid not in self._snippets:
            self._snippets[mid] = chunk_snippet(self.chunk(row), self.shown.pool.query).marked()
        return self._snippets[mid]

    def _label(self, row: int) -> str:
        c = self.chunk(row)
        mark = ("★ " if is_gold(c, self._gold) else "") + (PIN_MARK + " " if c.memory_id in self._pins else "")
        return mark + short_id(c.memory_id, c.user_id)


class PoolModel(PoolRowsModel):
    """The whole candidate pool (not only top k) with each candidate's fate."""

    POOL_RANK, SNIPPET, CHUNK, GRADE, KIND, FUSED, FINAL, ROUTES, FATE, REASON = range(10)
    HEADERS = ("Pool #", "Snippet", "Chunk", "Grade", "Kind", "RRF", "Final", "Routes", "Fate", "Why")
    HEADER_TIPS = {
        POOL_RANK: RANK_TIP,
        SNIPPET: SNIPPET_TIP,
        GRADE: GRADE_TIP,
        FUSED: "Fused (RRF) score of the chunk itself, before turn support",
        FINAL: "final_score of re-ranked rows (with turn support and alpha · memory)",
        FATE: "What happened to this chunk for this query and these settings",
    }
    NUMERIC = frozenset({POOL_RANK, GRADE, FUSED, FINAL})

    def __init__(self, parent=None):
        super().__init__(parent)
        self._grades: dict[str, int] = {}

    def set_grades(self, grades: Mapping[str, int]) -> None:
        """Memory id -> relevance grade for the current query (the Grade column)."""
        self._grades = dict(grades)
        self._refresh_column(self.GRADE)

    def set_ranking(self, ranking: Ranking | None, gold: Iterable[str] = (), pins: Iterable[str] = ()) -> None:
        super().set_ranking(ranking, gold, pins)
        self._final = {r.index: r.final_score for r in ranking.rows} if ranking is not None else {}

    def display(self, row: int, col: int) -> str | None:
        if col == self.POOL_RANK:
            return str(row + 1) if row < self._cands else "fetched"
        if col == self.SNIPPET:
            return self.snippet(row)
        if col == self.CHUNK:
            return self._label(row)
        if col == self.GRADE:
            return grade_text(self._grades.get(self.memory_id(row)))
        if col == self.KIND:
            return self.chunk(row).kind
        if col == self.FUSED:
            return fmt(float(self.shown.fused[self._rows[row]]))
        if col == self.FINAL:
            return fmt(self._final.get(self._rows[row]))
        if col == self.ROUTES:
            i = self._rows[row]
            return routes_text(r for j, r in enumerate(ROUTES) if self.shown.live[i, j])
        if col == self.FATE:
            return fate_label(self.fate(row), self.chunk(row).user_id)
        if col == self.REASON:
            return self.fate(row).reason
        return None

    def raw(self, row: int, col: int) -> Any:
        i = self._rows[row]
        if col == self.POOL_RANK:
            return self.pool_rank(row)
        if col == self.FUSED:
            return float(self.shown.fused[i])
        if col == self.FINAL:
            return self._final.get(i)
        if col == self.FATE:
            return self.fate(row).status
        if col == self.CHUNK:
            return self.memory_id(row)
        if col == self.GRADE:
            return self._grades.get(self.memory_id(row))
        return self.display(row, col)

    def tooltip(self, row: int, col: int) -> str | None:
        if col == self.GRADE:
            return GRADE_TIP
        if col in (self.FATE, self.REASON):
            return self.fate(row).reason
        if col in (self.CHUNK, self.SNIPPET):
            return f"{self.memory_id(row)}\n{preview(self.chunk(row), 400)}"
        return None

    def foreground(self, row: int, col: int) -> QColor | None:
        return fate_color(self.fate(row).status) if col == self.FATE else None

    def background(self, row: int, col: int) -> QColor | None:
        return theme.current().qcolor("gold") if is_gold(self.chunk(row), self._gold) else None
