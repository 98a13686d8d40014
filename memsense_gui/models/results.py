"""The results table: the returned chunks in result order, with movement since the previous settings."""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from PySide6.QtGui import QColor, QFont

from core.rank.ranking import Ranking, Row
from core.recall.snippet import chunk_snippet
from core.records import Chunk
from memsense_gui import theme
from memsense_gui.models.format import (
    GRADE_TIP, PIN_MARK, SNIPPET_TIP, fmt, grade_text, is_gold, movement_text, preview, routes_text, short_id,
)
from memsense_gui.models.table import TableModel, bold_font


class ResultsModel(TableModel):
    """The returned results, in result order, with movement since the previous settings."""

    RANK, PREVIEW, MOVED, SESSION, CHUNK, GRADE, FINAL, RRF, MEMORY, TURN_SUPPORT, MMR, REDUNDANCY, ROUTES = range(13)
    HEADERS = ("#", "Snippet", "Moved", "Session", "Chunk", "Grade", "Final", "RRF", "Memory", "Turn sup.", "MMR",
               "Redund.", "Routes")
    HEADER_TIPS = {
        PREVIEW: SNIPPET_TIP,
        MOVED: "Places moved since the previous settings (▲ up, ▼ down, new = not returned before)",
        GRADE: GRADE_TIP,
        FINAL: "final_score = rrf_score + alpha · memory score",
        RRF: "rrf_score = Σ w / (k + rank) over the routes that found it, + turn support",
        MEMORY: "stored memory score (clamped to [0, 1])",
        TURN_SUPPORT: "turn_support = min(cap, factor · best supporting turn's RRF)",
        MMR: "mmr = lambda · final − (1 − lambda) · max redundancy at the time of the pick",
        REDUNDANCY: "max redundancy against the rows already picked",
    }
    NUMERIC = frozenset({RANK, GRADE, FINAL, RRF, MEMORY, TURN_SUPPORT, MMR, REDUNDANCY})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self._previous: list[str] | None = None
        self._gold: frozenset[str] = frozenset()
        self._pins: frozenset[str] = frozenset()
        self._grades: dict[str, int] = {}
        self._items: list[tuple[Row, Chunk, Any]] = []
        self._snippets: list[str] = []

    def set_ranking(self, ranking: Ranking | None, previous: Sequence[str] | None = None,
                    gold: Iterable[str] = (), pins: Iterable[str] = ()) -> None:
        """`previous`: result ids under the previous settings (None = nothing to compare)."""
        self.beginResetModel()
        self.ranking = ranking
        self._previous = list(previous) if previous is not None else None
        self._gold = frozenset(gold)
        self._pins = frozenset(pins)
        self._items = []
        if ranking is not None:
            for step in ranking.selection.steps:
                row = ranking.rows[step.row]
                self._items.append((row, ranking.pool.chunks[row.index], step))
        query = ranking.pool.query if ranking is not None else ""
        self._snippets = [chunk_snippet(chunk, query).marked() for _, chunk, _ in self._items]
        self._n = len(self._items)
        self.endResetModel()

    def set_grades(self, grades: Mapping[str, int]) -> None:
        """Memory id -> relevance grade for the current query (the Grade column)."""
        self._grades = dict(grades)
        self._refresh_column(self.GRADE)

    def memory_id(self, row: int) -> str:
        return self._items[row][1].memory_id

    def result(self, row: int) -> dict[str, Any]:
        return self.ranking.results[row]

    def _move(self, row: int) -> tuple[str, int | None]:
        mid = self.memory_id(row)
        prev = None
        if self._previous is not None and mid in self._previous:
            prev = self._previous.index(mid) + 1
        return movement_text(prev, row + 1, self._previous is not None)

    def display(self, row: int, col: int) -> str | None:
        r, chunk, step = self._items[row]
        user = chunk.user_id
        if col == self.RANK:
            return str(row + 1)
        if col == self.MOVED:
            return self._move(row)[0]
        if col == self.SESSION:
            return ("★ " if is_gold(chunk, self._gold) else "") + short_id(chunk.session_id, user)
        if col == self.CHUNK:
            return (PIN_MARK + " " if chunk.memory_id in self._pins else "") + short_id(chunk.memory_id, user)
        if col == self.GRADE:
            return grade_text(self._grades.get(chunk.memory_id))
        if col == self.MMR:
            if step.fallback:
                return "fallback"
            return "top" if step.mmr_score is None else fmt(step.mmr_score)
        if col == self.ROUTES:
            return routes_text(r.routes)
        if col == self.PREVIEW:
            return self._snippets[row]
        return fmt(self.raw(row, col))

    def raw(self, row: int, col: int) -> Any:
        r, chunk, step = self._items[row]
        values = {
            self.RANK: row + 1, self.MOVED: self._move(row)[1], self.SESSION: chunk.session_id,
            self.CHUNK: chunk.memory_id, self.GRADE: self._grades.get(chunk.memory_id),
            self.FINAL: r.final_score, self.RRF: r.rrf_score,
            self.MEMORY: self.ranking.results[row]["explain"]["memory_score"],
            self.TURN_SUPPORT: r.turn_support, self.MMR: step.mmr_score,
            self.REDUNDANCY: step.max_redundancy, self.ROUTES: list(r.routes), self.PREVIEW: chunk.user_text,
        }
        return values[col]

    def tooltip(self, row: int, col: int) -> str | None:
        r, chunk, step = self._items[row]
        if col == self.REDUNDANCY and step.redundant_with is not None:
            other = self.ranking.pool.chunks[self.ranking.rows[step.redundant_with].index]
            return f"max redundancy {step.max_redundancy:.4f} against {other.memory_id}"
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
        if col == self.MOVED:
            delta = self._move(row)[1]
            t = theme.current()
            if self._move(row)[0] == "new":
                return t.qcolor("accent")
            if delta:
                return t.qcolor("up") if delta > 0 else t.qcolor("down")
        if col == self.MMR and self._items[row][2].fallback:
            return theme.current().qcolor("fallback")
        return None

    def background(self, row: int, col: int) -> QColor | None:
        if is_gold(self._items[row][1], self._gold):
            return theme.current().qcolor("gold")
        return None

    def font(self, row: int, col: int) -> QFont | None:
        return bold_font() if col in (self.RANK, self.MOVED, self.GRADE) else None
