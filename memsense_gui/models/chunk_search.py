"""Why not? The user's chunks matching a text filter, with their fate for the current ranking."""
from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtGui import QColor

from core.rank.explain import Fate
from core.rank.ranking import Ranking
from core.records import Chunk
from memsense_gui.models.format import fate_color, fate_label, preview, short_id
from memsense_gui.models.table import TableModel


class ChunkSearchModel(TableModel):
    """The user's chunks matching a text filter, with their fate for the current ranking."""

    CHUNK, KIND, FATE, PREVIEW = range(4)
    HEADERS = ("Chunk", "Kind", "Fate", "Text")
    LIMIT = 300

    def __init__(self, parent=None):
        super().__init__(parent)
        self._chunks: tuple[Chunk, ...] = ()
        self._haystack: list[str] = []
        self._hits: list[Chunk] = []
        self._filter = ""
        self.ranking: Ranking | None = None
        self.total_matches = 0
        self.fate_of: Callable[[Ranking, str], Fate] = Ranking.fate
        """How a chunk's fate is read (the window's: `QuerySession.fate`, never deepening on the UI thread)."""

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The user's chunks searched (all of them, not only the matches)."""
        return self._chunks

    def set_chunks(self, chunks: Sequence[Chunk]) -> None:
        self._chunks = tuple(chunks)
        self._haystack = [f"{c.memory_id}\n{c.user_text}\n{c.assistant_text}\n{' '.join(c.tags)}\n{c.task_tag}".lower()
                          for c in self._chunks]
        self.set_filter(self._filter)

    def set_filter(self, text: str) -> None:
        """Every word must occur (case-insensitive) in the chunk's id, text, tags or task tag."""
        self.beginResetModel()
        self._filter = text
        words = text.lower().split()
        hits = [c for c, h in zip(self._chunks, self._haystack) if all(w in h for w in words)] if words else []
        self.total_matches = len(hits)
        self._hits = hits[: self.LIMIT]
        self._n = len(self._hits)
        self.endResetModel()

    def set_ranking(self, ranking: Ranking | None) -> None:
        self.ranking = ranking
        self.refresh()

    @property
    def chunk_count(self) -> int:
        return len(self._chunks)

    def memory_id(self, row: int) -> str:
        return self._hits[row].memory_id

    def display(self, row: int, col: int) -> str | None:
        c = self._hits[row]
        if col == self.CHUNK:
            return short_id(c.memory_id, c.user_id)
        if col == self.KIND:
            return c.kind
        if col == self.FATE:
            return fate_label(self.fate_of(self.ranking, c.memory_id), c.user_id) if self.ranking else ""
        return preview(c)

    def foreground(self, row: int, col: int) -> QColor | None:
        if col == self.FATE and self.ranking is not None:
            return fate_color(self.fate_of(self.ranking, self._hits[row].memory_id).status)
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        if col == self.FATE and self.ranking is not None:
            return self.fate_of(self.ranking, self._hits[row].memory_id).reason
        return preview(self._hits[row], 600)
