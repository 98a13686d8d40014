"""The MMR selection step by step: each pick, and each row as it became a duplicate."""
from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QFont

from core.rank.ranking import Ranking
from core.records import Chunk
from memsense_gui import theme
from memsense_gui.models.format import fmt, short_id
from memsense_gui.models.table import TableModel, bold_font, on_screen, term_headers, term_tips


class MMRTraceModel(TableModel):
    """The MMR selection step by step: each pick, and each row as it became a duplicate."""

    STEP, EVENT, CHUNK, FINAL, MMR, REDUNDANCY, AGAINST, NOTE = range(8)
    TERMS = {CHUNK: "memory_id", FINAL: "final_score", MMR: "mmr_score", REDUNDANCY: "max_redundancy",
             AGAINST: "redundant_with"}
    """Columns headed by a record term (`core.rank.glossary`); a skip event's Max redund. is the one at that step."""
    HEADERS = term_headers(("Step", "Event", "", "", "", "", "", "Note"), TERMS)
    HEADER_TIPS = term_tips(TERMS)
    NUMERIC = frozenset({STEP, FINAL, MMR, REDUNDANCY})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self._events: list[dict[str, Any]] = []

    @property
    def shown(self) -> Ranking:
        """The ranking on screen (rows are read only while there is one)."""
        return on_screen(self.ranking)

    def set_ranking(self, ranking: Ranking | None) -> None:
        self.beginResetModel()
        self.ranking = ranking
        self._events = self._build(ranking) if ranking is not None else []
        self._n = len(self._events)
        self.endResetModel()

    @staticmethod
    def _build(ranking: Ranking) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        seen_dup: set[int] = set()
        cfg = ranking.config
        for r, first in sorted(ranking.selection.same_session.items()):  # selection by session, before MMR
            events.append(dict(step=1, event="skip", row=r, mmr=None, red=None, against=first,
                               note="same session as an earlier row: skipped (selection by session)"))
        for step in ranking.selection.steps:
            for r, red, of in step.skipped:
                if r not in seen_dup:
                    seen_dup.add(r)
                    events.append(dict(step=step.position + 1, event="skip", row=r, mmr=None, red=red, against=of,
                                       note=f"duplicate (≥ {cfg.duplicate_threshold:g}), skipped from here on"))
            note = "highest final score" if step.position == 0 else (
                "fallback fill: every remaining row was a duplicate" if step.fallback else "")
            events.append(dict(step=step.position + 1, event="pick", row=step.row, mmr=step.mmr_score,
                               red=step.max_redundancy, against=step.redundant_with, note=note))
        return events

    def _chunk(self, row_pos: int | None) -> Chunk | None:
        if row_pos is None or row_pos < 0:
            return None
        return self.shown.pool.chunks[self.shown.rows[row_pos].index]

    def memory_id(self, row: int) -> str | None:
        chunk = self._chunk(self._events[row]["row"])
        return chunk.memory_id if chunk is not None else None

    def display(self, row: int, col: int) -> str | None:
        e = self._events[row]
        chunk = self._chunk(e["row"])
        if col == self.STEP:
            return str(e["step"])
        if col == self.EVENT:
            return e["event"]
        if col == self.CHUNK:
            return short_id(chunk.memory_id, chunk.user_id) if chunk is not None else ""
        if col == self.FINAL:
            return fmt(self.shown.rows[e["row"]].final_score)
        if col == self.MMR:
            return fmt(e["mmr"])
        if col == self.REDUNDANCY:
            return fmt(e["red"]) if e["against"] is not None and e["red"] is not None else ""
        if col == self.AGAINST:
            other = self._chunk(e["against"])
            return short_id(other.memory_id, other.user_id) if other else ""
        return e["note"]

    def raw(self, row: int, col: int) -> Any:
        e = self._events[row]
        if col == self.FINAL:
            return self.shown.rows[e["row"]].final_score
        if col == self.MMR:
            return e["mmr"]
        if col == self.REDUNDANCY:
            return e["red"]
        if col == self.STEP:
            return e["step"]
        return self.display(row, col)

    def foreground(self, row: int, col: int) -> QColor | None:
        e = self._events[row]
        t = theme.current()
        if e["event"] == "skip":
            return t.qcolor("duplicate")
        return t.qcolor("fallback") if "fallback" in e["note"] else None

    def font(self, row: int, col: int) -> QFont | None:
        return bold_font() if self._events[row]["event"] == "pick" and col == self.CHUNK else None
