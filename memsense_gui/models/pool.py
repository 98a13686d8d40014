"""The candidate pool: every candidate (not only top k) with its fate; the base of the route matrix."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from PySide6.QtGui import QColor

from core.rank.explain import Fate
from core.rank.glossary import tooltip
from core.rank.ranking import Ranking
from core.rank.record import CandidateRecord, ranking_fate
from core.recall.lexical.snippet import chunk_snippet
from core.records import Chunk
from memsense_gui import theme
from memsense_gui.models.format import (
    GRADE_TIP, PIN_MARK, SNIPPET_TIP, fate_color, fate_label, fmt, grade_text, is_gold, pool_rows, preview, routes_text, short_id,
)
from memsense_gui.models.table import TableModel, on_screen, term_headers, term_tips

RANK_TIP = f"{tooltip('pool_rank')}; 'fetched' = a session brought in by its turns"


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
        self.fate_of: Callable[[Ranking, str], Fate] = ranking_fate
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
        self._records: dict[int, CandidateRecord] = {}
        self._n = len(self._rows)
        self.endResetModel()

    def chunk(self, row: int) -> Chunk:
        return self.shown.pool.chunks[self._rows[row]]

    def memory_id(self, row: int) -> str:
        return self.chunk(row).memory_id

    def pool_index(self, row: int) -> int:
        return self._rows[row]

    def record(self, row: int) -> CandidateRecord:
        """The row's record (`core.rank.record`), its fate read by `fate_of`; made when first asked."""
        if row not in self._records:
            self._records[row] = self.shown.record(self.memory_id(row), self.fate_of)
        return self._records[row]

    def fate(self, row: int) -> Fate:
        rec = self.record(row)
        return Fate(rec.memory_id, rec.status, rec.reason, rec.selected_rank, rec.duplicate_of, rec.supports_session)

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
    """The whole candidate pool (not only top k) with each candidate's record and fate."""

    (POOL_RANK, SNIPPET, CHUNK, GRADE, KIND, OWN_RRF, TURN_SUPPORT, RRF, MEMORY, FINAL, ROUTES, FATE,
     REASON) = range(13)
    TERMS = {POOL_RANK: "pool_rank", CHUNK: "memory_id", KIND: "kind", OWN_RRF: "session_rrf_score",
             TURN_SUPPORT: "turn_support", RRF: "rrf_score", MEMORY: "memory_score", FINAL: "final_score",
             ROUTES: "routes", FATE: "status", REASON: "reason"}
    """Columns that show a record term (`core.rank.glossary`): its label heads them, its formula is the tip."""
    HEADERS = term_headers(("", "Snippet", "", "Grade", "", "", "", "", "", "", "", "", ""), TERMS)
    HEADER_TIPS = {**term_tips(TERMS), POOL_RANK: RANK_TIP,
                   SNIPPET: SNIPPET_TIP, GRADE: GRADE_TIP}
    NUMERIC = frozenset({POOL_RANK, GRADE, OWN_RRF, TURN_SUPPORT, RRF, MEMORY, FINAL})

    def __init__(self, parent=None):
        super().__init__(parent)
        self._grades: dict[str, int] = {}

    def set_grades(self, grades: Mapping[str, int]) -> None:
        """Memory id -> relevance grade for the current query (the Grade column)."""
        self._grades = dict(grades)
        self._refresh_column(self.GRADE)

    def display(self, row: int, col: int) -> str | None:
        if col == self.POOL_RANK:
            return str(row + 1) if row < self._cands else "fetched"
        if col == self.SNIPPET:
            return self.snippet(row)
        if col == self.CHUNK:
            return self._label(row)
        if col == self.GRADE:
            return grade_text(self._grades.get(self.memory_id(row)))
        if col == self.ROUTES:
            return routes_text(self.record(row).routes)
        if col == self.FATE:
            return fate_label(self.fate(row), self.chunk(row).user_id)
        value = self.raw(row, col)
        return value if isinstance(value, str) else fmt(value)

    def raw(self, row: int, col: int) -> Any:
        if col == self.GRADE:
            return self._grades.get(self.memory_id(row))
        if col in self.TERMS:
            value = self.record(row).value(self.TERMS[col])
            return list(value) if col == self.ROUTES else value
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
