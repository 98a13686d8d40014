"""How core records read in a table: short ids, previews, movement, fates, gold marks."""
from __future__ import annotations

import math
import re
from typing import Iterable

from PySide6.QtGui import QColor

from core.rank.explain import Fate
from core.rank.ranking import Ranking
from core.rank.record import pool_order
from core.records import Chunk
from memsense_gui import theme

ROUTE_SHORT: dict[str, str] = {
    "vec_full": "full", "vec_user": "user", "vec_asst": "asst", "vec_next_user": "next",
    "lexical": "lex", "facet_personal_info": "info", "facet_preferences": "pref", "facet_events": "event",
    "session_lexical": "s-lex", "session_dense": "s-dense",
    "turn_support": "+turn",
}
# The pin mark is a glyph DejaVu Sans (the font the project installs) has, never an emoji,
# which shows as an empty box on a machine without an emoji font.
PIN_MARK = "\u2691"  # ⚑ black flag
_HEADER = re.compile(r"^\[group chat conversation:[^\]]*\]\s*")


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
    if fate.status == "same_session":
        return f"same session as {short_id(fate.duplicate_of, user_id)}"
    if fate.status == "supporting_turn":
        return f"supports {short_id(fate.supports_session, user_id)}"
    return fate.status.replace("_", " ")


def fate_color(status: str) -> QColor | None:
    t = theme.current()
    name = {"selected": "selected", "fallback_fill": "fallback", "duplicate": "duplicate",
            "same_session": "duplicate"}.get(status)
    return t.qcolor(name) if name else (t.qcolor("muted") if status != "supporting_turn" else None)


def pool_rows(ranking: Ranking) -> list[int]:
    """Pool rows to show (`core.rank.record.pool_order`): the candidate pool in pool order, then
    session rows fetched for turn support that were not in the pool themselves."""
    return pool_order(ranking)


SNIPPET_TIP = "The chunk's sentence that best matches the query, query words in bold"
GRADE_TIP = "Relevance marked for this query: 0 not relevant … 3 perfect (select a row, press 0-3)"


def grade_text(grade: int | None) -> str:
    return "" if grade is None else str(grade)


def text_on(background: QColor) -> QColor:
    """Black or white text, whichever reads better on `background`."""
    lum = 0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF()
    return QColor("#000000") if lum > 0.55 else QColor("#ffffff")


def row_position(ranking: Ranking, pool_index: int | None) -> int | None:
    """Where a pool row sits among the re-ranked rows (None: it was not re-ranked)."""
    if pool_index is None:
        return None
    return next((k for k, r in enumerate(ranking.rows) if r.index == pool_index), None)
