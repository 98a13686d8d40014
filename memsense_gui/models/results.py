"""The results table: the returned chunks in result order, with movement against the baseline;
with a pinned baseline, the results it returned that dropped out follow, greyed."""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from PySide6.QtGui import QColor, QFont

from core.rank.ranking import Ranking
from core.rank.record import CandidateRecord
from core.recall.lexical.snippet import chunk_snippet
from core.records import Chunk
from memsense_gui import theme
from memsense_gui.models.format import (
    GRADE_TIP, PIN_MARK, SNIPPET_TIP, fmt, grade_text, is_gold, movement_text, preview, routes_text, short_id,
)
from memsense_gui.models.table import TableModel, bold_font, italic_font, on_screen, term_headers, term_tips


class ResultsModel(TableModel):
    """The returned results, in result order, with movement against the baseline; then, when
    asked, one greyed row per baseline result that dropped out ("out, was #2")."""

    (RANK, PREVIEW, MOVED, SESSION, CHUNK, GRADE, FINAL, RRF, OWN_RRF, TURN_SUPPORT, MEMORY, MMR, REDUNDANCY,
     ROUTES) = range(14)
    TERMS = {RANK: "selected_rank", SESSION: "session_id", CHUNK: "memory_id", FINAL: "final_score", RRF: "rrf_score", OWN_RRF: "session_rrf_score",
             TURN_SUPPORT: "turn_support", MEMORY: "memory_score", MMR: "mmr_score", REDUNDANCY: "max_redundancy",
             ROUTES: "routes"}
    """Columns that show a record term (`core.rank.glossary`): its label heads them, its formula is the tip."""
    HEADERS = term_headers(("", "Snippet", "Moved", "Session", "Chunk", "Grade", "", "", "", "", "", "", "", ""), TERMS)
    HEADER_TIPS = {
        PREVIEW: SNIPPET_TIP,
        MOVED: "Places moved against the baseline: the pinned one, else the settings before the last change "
               "(▲ up, ▼ down, new = not returned by the baseline; greyed 'out, was #n' rows dropped out)",
        GRADE: GRADE_TIP,
        **term_tips(TERMS),
    }
    NUMERIC = frozenset({RANK, GRADE, FINAL, RRF, OWN_RRF, TURN_SUPPORT, MEMORY, MMR, REDUNDANCY})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self._previous: list[str] | None = None
        self._gold: frozenset[str] = frozenset()
        self._pins: frozenset[str] = frozenset()
        self._grades: dict[str, int] = {}
        self._items: list[tuple[CandidateRecord, Chunk]] = []
        self._dropped: list[tuple[Chunk, int]] = []  # (chunk, its rank under the baseline)
        self._snippets: list[str] = []
        self.result_count = 0

    @property
    def shown(self) -> Ranking:
        """The ranking on screen (rows are read only while there is one)."""
        return on_screen(self.ranking)

    def set_ranking(self, ranking: Ranking | None, previous: Sequence[str] | None = None,
                    gold: Iterable[str] = (), pins: Iterable[str] = (), *, dropped: bool = False) -> None:
        """`previous`: result ids under the baseline (None = nothing to compare); `dropped`:
        list those of them not returned now, after the results."""
        self.beginResetModel()
        self.ranking = ranking
        self._previous = list(previous) if previous is not None else None
        self._gold = frozenset(gold)
        self._pins = frozenset(pins)
        self._items = []
        if ranking is not None:
            for step in ranking.selection.steps:
                chunk = ranking.pool.chunks[ranking.rows[step.row].index]
                self._items.append((ranking.record(chunk.memory_id), chunk))
        self._dropped = []
        if ranking is not None and dropped and previous is not None:
            now = set(ranking.result_ids)
            pool = ranking.pool
            self._dropped = [(pool.chunks[i], k) for k, mid in enumerate(previous, start=1)
                             if mid not in now and (i := pool.index_of(mid)) is not None]
        query = ranking.pool.query if ranking is not None else ""
        chunks = [chunk for _, chunk in self._items] + [chunk for chunk, _ in self._dropped]
        self._snippets = [chunk_snippet(chunk, query).marked() for chunk in chunks]
        self.result_count = len(self._items)
        self._n = len(chunks)
        self.endResetModel()

    def is_dropped(self, row: int) -> bool:
        """A baseline result not returned now (listed after the results)."""
        return row >= self.result_count

    def dropped_ids(self) -> list[tuple[str, int]]:
        """(memory id, rank under the baseline) of every dropped-out row, in baseline order."""
        return [(chunk.memory_id, was) for chunk, was in self._dropped]

    def set_grades(self, grades: Mapping[str, int]) -> None:
        """Memory id -> relevance grade for the current query (the Grade column)."""
        self._grades = dict(grades)
        self._refresh_column(self.GRADE)

    def chunk(self, row: int) -> Chunk:
        return self._items[row][1] if row < self.result_count else self._dropped[row - self.result_count][0]

    def memory_id(self, row: int) -> str:
        return self.chunk(row).memory_id

    def result(self, row: int) -> dict[str, Any]:
        return self.shown.results[row]

    def _move(self, row: int) -> tuple[str, int | None]:
        mid = self.memory_id(row)
        prev = None
        if self._previous is not None and mid in self._previous:
            prev = self._previous.index(mid) + 1
        return movement_text(prev, row + 1, self._previous is not None)

    def _dropped_display(self, row: int, col: int) -> str | None:
        chunk, was = self._dropped[row - self.result_count]
        if col == self.MOVED:
            return f"out, was #{was}"
        if col == self.PREVIEW:
            return self._snippets[row]
        if col in (self.SESSION, self.CHUNK):
            return self._label(chunk, col)
        if col == self.GRADE:
            return grade_text(self._grades.get(chunk.memory_id))
        return ""

    def _label(self, chunk: Chunk, col: int) -> str:
        if col == self.SESSION:
            return ("★ " if is_gold(chunk, self._gold) else "") + short_id(chunk.session_id, chunk.user_id)
        return (PIN_MARK + " " if chunk.memory_id in self._pins else "") + short_id(chunk.memory_id, chunk.user_id)

    def display(self, row: int, col: int) -> str | None:
        if self.is_dropped(row):
            return self._dropped_display(row, col)
        r, chunk = self._items[row]
        if col == self.MOVED:
            return self._move(row)[0]
        if col in (self.SESSION, self.CHUNK):
            return self._label(chunk, col)
        if col == self.GRADE:
            return grade_text(self._grades.get(chunk.memory_id))
        if col == self.MMR:
            if r.fallback_fill:
                return "fallback"
            return "top" if r.mmr_score is None else fmt(r.mmr_score)
        if col == self.ROUTES:
            return routes_text(r.routes)
        if col == self.PREVIEW:
            return self._snippets[row]
        if col == self.RANK:
            return str(r.selected_rank)
        return fmt(self.raw(row, col))

    def raw(self, row: int, col: int) -> Any:
        if self.is_dropped(row):
            chunk = self.chunk(row)
            return {self.SESSION: chunk.session_id, self.CHUNK: chunk.memory_id, self.PREVIEW: chunk.user_text,
                    self.GRADE: self._grades.get(chunk.memory_id)}.get(col)
        r, chunk = self._items[row]
        if col in self.TERMS:
            value = r.value(self.TERMS[col])
            return list(value) if col == self.ROUTES else value
        values = {
            self.MOVED: self._move(row)[1], self.GRADE: self._grades.get(chunk.memory_id), self.PREVIEW: chunk.user_text,
        }
        return values[col]

    def tooltip(self, row: int, col: int) -> str | None:
        if self.is_dropped(row):
            chunk, was = self._dropped[row - self.result_count]
            return f"dropped out: #{was} under the baseline, not returned now\n{preview(chunk, 400)}"
        r, chunk = self._items[row]
        if col == self.REDUNDANCY and r.redundant_with is not None:
            return f"max redundancy {r.max_redundancy:.4f} against {r.redundant_with}"
        if col == self.ROUTES:
            return ", ".join(r.routes)
        if col == self.PREVIEW:
            return preview(chunk, 600)
        if col == self.GRADE:
            return GRADE_TIP
        if col in (self.SESSION, self.CHUNK) and is_gold(chunk, self._gold):
            return "gold: a session judged relevant to this question"
        return None

    def foreground(self, row: int, col: int) -> QColor | None:
        if self.is_dropped(row):
            return theme.current().qcolor("muted")
        if col == self.MOVED:
            delta = self._move(row)[1]
            t = theme.current()
            if self._move(row)[0] == "new":
                return t.qcolor("accent")
            if delta:
                return t.qcolor("up") if delta > 0 else t.qcolor("down")
        if col == self.MMR and self._items[row][0].fallback_fill:
            return theme.current().qcolor("fallback")
        return None

    def background(self, row: int, col: int) -> QColor | None:
        if is_gold(self.chunk(row), self._gold):
            return theme.current().qcolor("gold")
        return None

    def font(self, row: int, col: int) -> QFont | None:
        if self.is_dropped(row):
            return italic_font() if col == self.MOVED else None
        return bold_font() if col in (self.RANK, self.MOVED, self.GRADE) else None
