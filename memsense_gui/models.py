"""Table and tree models: thin adapters over a `core.rerank.Ranking`.

Each model has column constants, shows text only in DisplayRole and gives the raw value
(number, id, None) in `RAW_ROLE` for sorting and plotting; `ID_ROLE` is the row's memory_id.
The results and pool models also show the relevance grade (0-3) marked for the current query.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable, Mapping, Sequence

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from core.rerank import Fate, Ranking, Row
from core.types import ROUTES, Chunk
from memsense_gui import theme

RAW_ROLE = Qt.ItemDataRole.UserRole + 1
ID_ROLE = Qt.ItemDataRole.UserRole + 2

ROUTE_SHORT: dict[str, str] = {
    "vec_full": "full", "vec_user": "user", "vec_asst": "asst", "vec_next_user": "next",
    "lexical": "lex", "facet_personal_info": "info", "facet_preferences": "pref", "facet_events": "event",
    "turn_support": "+turn",
}
_DISPLAY = Qt.ItemDataRole.DisplayRole
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_RIGHT_INT = int(_RIGHT.value)
_ROLE_METHODS: dict[int, str] = {
    int(Qt.ItemDataRole.DisplayRole.value): "display",
    RAW_ROLE: "raw",
    ID_ROLE: "memory_id",
    int(Qt.ItemDataRole.TextAlignmentRole.value): "alignment",
    int(Qt.ItemDataRole.ToolTipRole.value): "tooltip",
    int(Qt.ItemDataRole.ForegroundRole.value): "foreground",
    int(Qt.ItemDataRole.BackgroundRole.value): "background",
    int(Qt.ItemDataRole.FontRole.value): "font",
}
_HEADER = re.compile(r"^\[group chat conversation:[^\]]*\]\s*")


# ---- helpers ----------------------------------------------------------------------------

def short_id(memory_id: str | None, user_id: str = "") -> str:
    """`conv-26:S003:P00` -> `S003:P00` (the user is the same for every row)."""
    if not memory_id:
        return ""
    prefix = f"{user_id}:"
    return memory_id[len(prefix):] if user_id and memory_id.startswith(prefix) else memory_id


def preview(chunk: Chunk, limit: int = 140) -> str:
    """The chunk's first words, without the session header line."""
    text = _HEADER.sub("", chunk.user_text or chunk.assistant_text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def routes_text(routes: Iterable[str]) -> str:
    return " ".join(ROUTE_SHORT.get(r, r) for r in routes)


def is_gold(chunk: Chunk, gold: frozenset[str]) -> bool:
    """Gold sessions are given as session ids or session numbers."""
    return bool(gold) and (chunk.session_id in gold or str(chunk.session_number) in gold)


def fmt(value: float | None, decimals: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.{decimals}f}"


def movement_text(previous: int | None, rank: int, has_baseline: bool) -> tuple[str, int | None]:
    """("▲2", 2) moved up two places; ("new", None) not returned before; ("", None) no baseline."""
    if not has_baseline:
        return "", None
    if previous is None:
        return "new", None
    delta = previous - rank
    return ("▲" if delta > 0 else "▼" if delta < 0 else "=") + (str(abs(delta)) if delta else ""), delta


def fate_label(fate: Fate, user_id: str = "") -> str:
    if fate.status == "selected":
        return f"selected #{fate.rank}"
    if fate.status == "fallback_fill":
        return f"fallback fill #{fate.rank}"
    if fate.status == "duplicate":
        return f"duplicate of {short_id(fate.duplicate_of, user_id)}"
    if fate.status == "supporting_turn":
        return f"supports {short_id(fate.supports_session, user_id)}"
    return fate.status.replace("_", " ")


def fate_color(status: str) -> QColor | None:
    t = theme.current()
    name = {"selected": "selected", "fallback_fill": "fallback", "duplicate": "duplicate"}.get(status)
    return t.qcolor(name) if name else (t.qcolor("muted") if status != "supporting_turn" else None)


def pool_rows(ranking: Ranking) -> list[int]:
    """Pool rows to show: the candidate pool in pool order, then session rows fetched for turn
    support that were not in the pool themselves."""
    seen = set(int(i) for i in ranking.candidates)
    extra = [r.index for r in ranking.rows if r.index not in seen]
    return [int(i) for i in ranking.candidates] + extra


GRADE_TIP = "Relevance marked for this query: 0 not relevant … 3 perfect (select a row, press 0-3)"


def grade_text(grade: int | None) -> str:
    return "" if grade is None else str(grade)


def text_on(background: QColor) -> QColor:
    """Black or white text, whichever reads better on `background`."""
    lum = 0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF()
    return QColor("#000000") if lum > 0.55 else QColor("#ffffff")


class _Table(QAbstractTableModel):
    """Shared plumbing: headers, row/column counts, role dispatch."""

    HEADERS: tuple[str, ...] = ()
    HEADER_TIPS: dict[int, str] = {}
    NUMERIC: frozenset[int] = frozenset()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._n = 0

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._n

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.HEADERS):
            return None
        if role == _DISPLAY:
            return self.HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.HEADER_TIPS.get(section)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        method = _ROLE_METHODS.get(role)  # views ask for a dozen roles per cell: answer fast
        if method is None or not index.isValid():
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < self._n and 0 <= col < len(self.HEADERS)):
            return None
        if method == "alignment":
            return _RIGHT_INT if col in self.NUMERIC else None
        if method == "memory_id":
            return self.memory_id(row)
        return getattr(self, method)(row, col)

    def display(self, row: int, col: int) -> str | None:
        raise NotImplementedError

    def raw(self, row: int, col: int) -> Any:
        return self.display(row, col)

    def memory_id(self, row: int) -> str | None:
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        return None

    def foreground(self, row: int, col: int) -> QColor | None:
        return None

    def background(self, row: int, col: int) -> QColor | None:
        return None

    def font(self, row: int, col: int) -> QFont | None:
        return None

    def refresh(self) -> None:
        """Repaint every cell (after a theme change) without losing the selection."""
        if self._n:
            self.dataChanged.emit(self.index(0, 0), self.index(self._n - 1, len(self.HEADERS) - 1))

    def _refresh_column(self, col: int) -> None:
        if self._n:
            self.dataChanged.emit(self.index(0, col), self.index(self._n - 1, col))

    def row_of(self, memory_id: str) -> int | None:
        for r in range(self._n):
            if self.memory_id(r) == memory_id:
                return r
        return None


_BOLD: list[QFont] = []


def _bold() -> QFont:
    if not _BOLD:
        f = QFont()
        f.setBold(True)
        _BOLD.append(f)
    return _BOLD[0]


# ---- results ------------------------------------------------------------------------------

class ResultsModel(_Table):
    """The returned results, in result order, with movement since the previous settings."""

    RANK, MOVED, SESSION, CHUNK, GRADE, FINAL, RRF, MEMORY, TURN_SUPPORT, MMR, REDUNDANCY, ROUTES, PREVIEW = range(13)
    HEADERS = ("#", "Moved", "Session", "Chunk", "Grade", "Final", "RRF", "Memory", "Turn sup.", "MMR",
               "Redund.", "Routes", "Preview")
    HEADER_TIPS = {
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
            return ("📌 " if chunk.memory_id in self._pins else "") + short_id(chunk.memory_id, user)
        if col == self.GRADE:
            return grade_text(self._grades.get(chunk.memory_id))
        if col == self.MMR:
            if step.fallback:
                return "fallback"
            return "top" if step.mmr_score is None else fmt(step.mmr_score)
        if col == self.ROUTES:
            return routes_text(r.routes)
        if col == self.PREVIEW:
            return preview(chunk)
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
        return _bold() if col in (self.RANK, self.MOVED, self.GRADE) else None


# ---- candidate pool and route-rank matrix ---------------------------------------------------

class _PoolBase(_Table):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self._rows: list[int] = []
        self._gold: frozenset[str] = frozenset()
        self._pins: frozenset[str] = frozenset()

    def set_ranking(self, ranking: Ranking | None, gold: Iterable[str] = (), pins: Iterable[str] = ()) -> None:
        self.beginResetModel()
        self.ranking = ranking
        self._rows = pool_rows(ranking) if ranking is not None else []
        self._gold = frozenset(gold)
        self._pins = frozenset(pins)
        self._fates: dict[int, Fate] = {}
        self._n = len(self._rows)
        self.endResetModel()

    def chunk(self, row: int) -> Chunk:
        return self.ranking.pool.chunks[self._rows[row]]

    def memory_id(self, row: int) -> str:
        return self.chunk(row).memory_id

    def pool_index(self, row: int) -> int:
        return self._rows[row]

    def fate(self, row: int) -> Fate:
        if row not in self._fates:
            self._fates[row] = self.ranking.fate(self.memory_id(row))
        return self._fates[row]

    def _label(self, row: int) -> str:
        c = self.chunk(row)
        mark = ("★ " if is_gold(c, self._gold) else "") + ("📌 " if c.memory_id in self._pins else "")
        return mark + short_id(c.memory_id, c.user_id)


class PoolModel(_PoolBase):
    """The whole candidate pool (not only top k) with each candidate's fate."""

    POOL_RANK, CHUNK, GRADE, KIND, FUSED, FINAL, ROUTES, FATE, REASON = range(9)
    HEADERS = ("Pool #", "Chunk", "Grade", "Kind", "RRF", "Final", "Routes", "Fate", "Why")
    HEADER_TIPS = {
        POOL_RANK: "Place in the candidate pool by fused score; 'fetched' = a session brought in by its turns",
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
        self._cands = len(ranking.candidates) if ranking is not None else 0

    def display(self, row: int, col: int) -> str | None:
        if col == self.POOL_RANK:
            return str(row + 1) if row < self._cands else "fetched"
        if col == self.CHUNK:
            return self._label(row)
        if col == self.GRADE:
            return grade_text(self._grades.get(self.memory_id(row)))
        if col == self.KIND:
            return self.chunk(row).kind
        if col == self.FUSED:
            return fmt(float(self.ranking.fused[self._rows[row]]))
        if col == self.FINAL:
            return fmt(self._final.get(self._rows[row]))
        if col == self.ROUTES:
            i = self._rows[row]
            return routes_text(r for j, r in enumerate(ROUTES) if self.ranking.live[i, j])
        if col == self.FATE:
            return fate_label(self.fate(row), self.chunk(row).user_id)
        if col == self.REASON:
            return self.fate(row).reason
        return None

    def raw(self, row: int, col: int) -> Any:
        i = self._rows[row]
        if col == self.POOL_RANK:
            return row + 1 if row < self._cands else None
        if col == self.FUSED:
            return float(self.ranking.fused[i])
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
        if col == self.CHUNK:
            return f"{self.memory_id(row)}\n{preview(self.chunk(row), 400)}"
        return None

    def foreground(self, row: int, col: int) -> QColor | None:
        return fate_color(self.fate(row).status) if col == self.FATE else None

    def background(self, row: int, col: int) -> QColor | None:
        return theme.current().qcolor("gold") if is_gold(self.chunk(row), self._gold) else None


class RouteMatrixModel(_PoolBase):
    """Candidates × the eight routes: each cell the route's rank, coloured by strength.

    Empty when the route missed the chunk; muted when found but not counted (beyond
    route_limit or weight 0). `RAW_ROLE` is the rank (0 = absent).
    """

    CHUNK = 0
    HEADERS = ("Chunk",) + tuple(ROUTE_SHORT[r] for r in ROUTES)
    HEADER_TIPS = {j + 1: r for j, r in enumerate(ROUTES)}
    NUMERIC = frozenset(range(1, len(ROUTES) + 1))

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole
                and section >= 1 and self.ranking is not None):
            route = ROUTES[section - 1]
            return f"{route}: weight {self.ranking.config.weight(route):g}, counted down to rank {self.ranking.config.route_limit}"
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
        return _bold() if col == self.CHUNK and self.is_focused(row) else None

    def set_ranking(self, ranking: Ranking | None, gold: Iterable[str] = (), pins: Iterable[str] = ()) -> None:
        super().set_ranking(ranking, gold, pins)
        # plain lists and a colour cache: painting asks for every visible cell on every tick
        self._ranks = ranking.pool.ranks[self._rows].tolist() if ranking is not None else []
        self._live = ranking.live[self._rows].tolist() if ranking is not None else []
        self._limit_log = math.log(max(ranking.config.route_limit, 2) + 1) if ranking is not None else 1.0
        self._colors: dict[tuple[bool, int], tuple[QColor, QColor]] = {}

    def refresh(self) -> None:
        self._colors = {}
        super().refresh()

    def _rank(self, row: int, col: int) -> int:
        return self._ranks[row][col - 1]

    def display(self, row: int, col: int) -> str | None:
        if col == self.CHUNK:
            return self._label(row)
        rank = self._ranks[row][col - 1]
        return str(rank) if rank else ""

    def raw(self, row: int, col: int) -> Any:
        return self.memory_id(row) if col == self.CHUNK else self._rank(row, col)

    def counted(self, row: int, col: int) -> bool:
        return self._live[row][col - 1]

    def strength(self, row: int, col: int) -> float:
        """1 for rank 1, falling with log rank to 0 at route_limit; 0 when absent."""
        rank = self._ranks[row][col - 1]
        if not rank:
            return 0.0
        return max(0.0, 1.0 - math.log(rank) / self._limit_log)

    def _cell_colors(self, row: int, col: int) -> tuple[QColor, QColor] | None:
        """(background, text) of a found cell, from a cache of 65 strength steps."""
        if not self._ranks[row][col - 1]:
            return None
        counted = self._live[row][col - 1]
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
        if col == self.CHUNK:
            if self.is_focused(row):
                return theme.current().qcolor("highlight")
            return theme.current().qcolor("gold") if is_gold(self.chunk(row), self._gold) else None
        colors = self._cell_colors(row, col)
        return colors[0] if colors else None

    def foreground(self, row: int, col: int) -> QColor | None:
        if col == self.CHUNK:
            return QColor("#ffffff") if self.is_focused(row) else None
        colors = self._cell_colors(row, col)
        return colors[1] if colors else None

    def tooltip(self, row: int, col: int) -> str | None:
        if col == self.CHUNK:
            return self.memory_id(row)
        route = ROUTES[col - 1]
        i = self._rows[row]
        rank = self._rank(row, col)
        if not rank:
            return f"{route}: not found"
        raw = float(self.ranking.pool.scores[i, col - 1])
        contrib = float(self.ranking.contributions[i, col - 1])
        state = "counted" if self.counted(row, col) else "not counted (beyond route_limit or weight 0)"
        return f"{route}: rank {rank}, raw score {raw:.4f}, RRF contribution {contrib:.4f}, {state}"


# ---- MMR trace ------------------------------------------------------------------------------

class MMRTraceModel(_Table):
    """The MMR selection step by step: each pick, and each row as it became a duplicate."""

    STEP, EVENT, CHUNK, FINAL, MMR, REDUNDANCY, AGAINST, NOTE = range(8)
    HEADERS = ("Step", "Event", "Chunk", "Final", "MMR", "Max redund.", "Against", "Note")
    HEADER_TIPS = {4: "lambda · final − (1 − lambda) · max redundancy",
                   5: "highest redundancy against the rows picked so far",
                   6: "the picked row that caused the max redundancy"}
    NUMERIC = frozenset({STEP, FINAL, MMR, REDUNDANCY})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self._events: list[dict[str, Any]] = []

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
        return self.ranking.pool.chunks[self.ranking.rows[row_pos].index]

    def memory_id(self, row: int) -> str:
        return self._chunk(self._events[row]["row"]).memory_id

    def display(self, row: int, col: int) -> str | None:
        e = self._events[row]
        chunk = self._chunk(e["row"])
        if col == self.STEP:
            return str(e["step"])
        if col == self.EVENT:
            return e["event"]
        if col == self.CHUNK:
            return short_id(chunk.memory_id, chunk.user_id)
        if col == self.FINAL:
            return fmt(self.ranking.rows[e["row"]].final_score)
        if col == self.MMR:
            return fmt(e["mmr"])
        if col == self.REDUNDANCY:
            return fmt(e["red"]) if e["against"] is not None else ""
        if col == self.AGAINST:
            other = self._chunk(e["against"])
            return short_id(other.memory_id, other.user_id) if other else ""
        return e["note"]

    def raw(self, row: int, col: int) -> Any:
        e = self._events[row]
        if col == self.FINAL:
            return self.ranking.rows[e["row"]].final_score
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
        return _bold() if self._events[row]["event"] == "pick" and col == self.CHUNK else None


# ---- turn support ----------------------------------------------------------------------------

class TurnSupportModel(_Table):
    """The turn chunks of one session found in the candidate pool, best first."""

    TURN, POOL_RANK, RRF, ROUTES, BEST = range(5)
    HEADERS = ("Turn", "Pool #", "RRF", "Routes", "Best")
    NUMERIC = frozenset({POOL_RANK, RRF})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.ranking: Ranking | None = None
        self.row: Row | None = None
        self._turns: list[tuple[int, int]] = []  # (pool row, pool rank)

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
        cfg = self.ranking.config
        if not self.row.supporting_turn_count:
            return "No turn of this session is in the candidate pool: turn support 0."
        best = float(self.ranking.fused[self.row.best_turn])
        return (f"turn_support = min(cap {cfg.turn_support_cap:g}, factor {cfg.turn_support_factor:g} × best turn "
                f"{best:.4f}) = <b>{self.row.turn_support:.4f}</b> · {self.row.supporting_turn_count} supporting "
                f"turn(s) · best turn routes: {', '.join(self.row.best_turn_routes) or '—'}")

    def memory_id(self, row: int) -> str:
        return self.ranking.pool.chunks[self._turns[row][0]].memory_id

    def display(self, row: int, col: int) -> str | None:
        i, rank = self._turns[row]
        c = self.ranking.pool.chunks[i]
        if col == self.TURN:
            return short_id(c.memory_id, c.user_id)
        if col == self.POOL_RANK:
            return str(rank)
        if col == self.RRF:
            return fmt(float(self.ranking.fused[i]))
        if col == self.ROUTES:
            return routes_text(r for j, r in enumerate(ROUTES) if self.ranking.live[i, j])
        return "★ best" if i == self.row.best_turn else ""

    def raw(self, row: int, col: int) -> Any:
        i, rank = self._turns[row]
        if col == self.POOL_RANK:
            return rank
        if col == self.RRF:
            return float(self.ranking.fused[i])
        if col == self.BEST:
            return i == self.row.best_turn
        return self.display(row, col)

    def tooltip(self, row: int, col: int) -> str | None:
        return preview(self.ranking.pool.chunks[self._turns[row][0]], 600)

    def font(self, row: int, col: int) -> QFont | None:
        return _bold() if self._turns[row][0] == self.row.best_turn else None


# ---- why not: chunk search and pins ------------------------------------------------------------

class ChunkSearchModel(_Table):
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
            return fate_label(self.ranking.fate(c.memory_id), c.user_id) if self.ranking else ""
        return preview(c)

    def foreground(self, row: int, col: int) -> QColor | None:
        if col == self.FATE and self.ranking is not None:
            return fate_color(self.ranking.fate(self._hits[row].memory_id).status)
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        if col == self.FATE and self.ranking is not None:
            return self.ranking.fate(self._hits[row].memory_id).reason
        return preview(self._hits[row], 600)


class PinsModel(_Table):
    """Pinned chunks and their fate, recomputed for every ranking (the "why not" answer)."""

    CHUNK, STATUS, RANK, REASON = range(4)
    HEADERS = ("Pinned chunk", "Fate", "Rank", "Why")
    NUMERIC = frozenset({RANK})

    def __init__(self, parent=None):
        super().__init__(parent)
        self._pins: tuple[str, ...] = ()
        self._fates: list[Fate | None] = []
        self._user = ""

    def set_pins(self, pins: Sequence[str], ranking: Ranking | None) -> None:
        self.beginResetModel()
        self._pins = tuple(pins)
        self._fates = [ranking.fate(p) if ranking is not None else None for p in self._pins]
        self._user = ranking.pool.user_id if ranking is not None else ""
        self._n = len(self._pins)
        self.endResetModel()

    def fate(self, row: int) -> Fate | None:
        return self._fates[row]

    def memory_id(self, row: int) -> str:
        return self._pins[row]

    def display(self, row: int, col: int) -> str | None:
        f = self._fates[row]
        if col == self.CHUNK:
            return short_id(self._pins[row], self._user)
        if f is None:
            return ""
        if col == self.STATUS:
            return fate_label(f, self._user)
        if col == self.RANK:
            return str(f.rank) if f.rank else ""
        return f.reason

    def raw(self, row: int, col: int) -> Any:
        f = self._fates[row]
        if col == self.STATUS:
            return f.status if f else None
        if col == self.RANK:
            return f.rank if f else None
        return self.display(row, col)

    def foreground(self, row: int, col: int) -> QColor | None:
        f = self._fates[row]
        return fate_color(f.status) if f is not None and col == self.STATUS else None

    def tooltip(self, row: int, col: int) -> str | None:
        f = self._fates[row]
        return f.reason if f else None


# ---- compare two presets ---------------------------------------------------------------------------

class CompareModel(_Table):
    """Two rankings of the same pool side by side, with each result's rank under the other."""

    RANK, A_CHUNK, A_FINAL, A_TO_B, B_CHUNK, B_FINAL, B_FROM_A = range(7)
    HEADERS = ("#", "A: chunk", "A final", "A → in B", "B: chunk", "B final", "B moved")
    HEADER_TIPS = {3: "Where A's result ranks under B ('out' = not returned by B)",
                   6: "How far B's result moved from its rank under A (new = not returned by A)"}
    NUMERIC = frozenset({RANK, A_FINAL, B_FINAL})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.a: Ranking | None = None
        self.b: Ranking | None = None
        self._gold: frozenset[str] = frozenset()

    def set_rankings(self, a: Ranking | None, b: Ranking | None, gold: Iterable[str] = ()) -> None:
        self.beginResetModel()
        self.a, self.b = a, b
        self._gold = frozenset(gold)
        self._a_ids = a.result_ids if a else []
        self._b_ids = b.result_ids if b else []
        self._n = max(len(self._a_ids), len(self._b_ids))
        self.endResetModel()

    def memory_id(self, row: int) -> str | None:
        return self._a_ids[row] if row < len(self._a_ids) else None

    def _chunk(self, ranking: Ranking, memory_id: str) -> Chunk:
        return ranking.pool.chunks[ranking.pool.index_of(memory_id)]

    def _label(self, ranking: Ranking, memory_id: str) -> str:
        c = self._chunk(ranking, memory_id)
        return ("★ " if is_gold(c, self._gold) else "") + short_id(memory_id, c.user_id)

    def display(self, row: int, col: int) -> str | None:
        if col == self.RANK:
            return str(row + 1)
        side, ids, other_ids = (self.a, self._a_ids, self._b_ids) if col <= self.A_TO_B else (self.b, self._b_ids, self._a_ids)
        if row >= len(ids):
            return ""
        mid = ids[row]
        if col in (self.A_CHUNK, self.B_CHUNK):
            return self._label(side, mid)
        if col in (self.A_FINAL, self.B_FINAL):
            return fmt(side.rows[side.selection.order[row]].final_score)
        if col == self.A_TO_B:
            return f"#{other_ids.index(mid) + 1}" if mid in other_ids else "out"
        prev = other_ids.index(mid) + 1 if mid in other_ids else None
        return movement_text(prev, row + 1, True)[0]

    def raw(self, row: int, col: int) -> Any:
        if col == self.B_FROM_A and row < len(self._b_ids):
            mid = self._b_ids[row]
            return (self._a_ids.index(mid) + 1 - (row + 1)) if mid in self._a_ids else None
        if col == self.A_TO_B and row < len(self._a_ids):
            mid = self._a_ids[row]
            return self._b_ids.index(mid) + 1 if mid in self._b_ids else None
        return self.display(row, col)

    def foreground(self, row: int, col: int) -> QColor | None:
        t = theme.current()
        text = self.display(row, col)
        if col == self.B_FROM_A and text:
            return t.qcolor("up") if text[0] == "▲" else t.qcolor("down") if text[0] == "▼" else (
                t.qcolor("accent") if text == "new" else None)
        if col == self.A_TO_B and text == "out":
            return t.qcolor("down")
        return None

    def background(self, row: int, col: int) -> QColor | None:
        side, ids = (self.a, self._a_ids) if col <= self.A_TO_B else (self.b, self._b_ids)
        if col != self.RANK and row < len(ids) and is_gold(self._chunk(side, ids[row]), self._gold):
            return theme.current().qcolor("gold")
        return None


# ---- explain tree ------------------------------------------------------------------------------------

class _Node:
    __slots__ = ("key", "value", "parent", "children", "row")

    def __init__(self, key: str, value: Any, parent: "_Node | None", row: int):
        self.key, self.parent, self.row = key, parent, row
        self.children: list[_Node] = []
        if isinstance(value, dict):
            self.value = None
            self.children = [_Node(str(k), v, self, i) for i, (k, v) in enumerate(value.items())]
        elif isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in value):
            self.value = None
            self.children = [_Node(f"[{i}]", v, self, i) for i, v in enumerate(value)]
        else:
            self.value = value


class DictTreeModel(QAbstractItemModel):
    """A nested dict (a result record with its explain) as a two-column tree: field, value."""

    KEY, VALUE = range(2)
    HEADERS = ("Field", "Value")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._root = _Node("", {}, None, 0)

    def set_data(self, data: dict[str, Any] | None) -> None:
        self.beginResetModel()
        self._root = _Node("", data or {}, None, 0)
        self.endResetModel()

    def _node(self, index: QModelIndex | QPersistentModelIndex) -> _Node:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        return self.createIndex(row, column, self._node(parent).children[row])

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer().parent
        if node is None or node is self._root:
            return QModelIndex()
        return self.createIndex(node.row, 0, node)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY and 0 <= section < 2:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        if not index.isValid():
            return None
        node: _Node = index.internalPointer()
        if role == _DISPLAY:
            if index.column() == self.KEY:
                return node.key
            return "" if node.children else _value_text(node.value)
        if role == RAW_ROLE:
            return node.key if index.column() == self.KEY else node.value
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == self.VALUE and not node.children:
            return str(node.value)
        return None

    def path_index(self, *keys: str) -> QModelIndex:
        """The index of a nested field, e.g. path_index("explain", "mmr", "mmr_score")."""
        node, index = self._root, QModelIndex()
        for key in keys:
            match = next((c for c in node.children if c.key == key), None)
            if match is None:
                return QModelIndex()
            node, index = match, self.index(match.row, 0, index)
        return index


def _value_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) if value else "[]"
    if value is None:
        return "null"
    text = str(value)
    return text if len(text) <= 300 else text[:299] + "…"
