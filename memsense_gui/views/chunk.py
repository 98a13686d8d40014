"""The chunk itself: content, tags, facets, neighbors, next user text."""
from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from core.records import Chunk
from memsense_gui import theme


class ChunkPanel(QWidget):
    """The chunk itself: content, tags, facets, neighbors, next user text."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.browser)
        self.memory_id: str | None = None

    def show_chunk(self, chunk: Chunk | None, neighbors: tuple[str | None, str | None] = (None, None),
                   fate: str = "") -> None:
        self.memory_id = chunk.memory_id if chunk else None
        self.browser.setHtml(chunk_html(chunk, neighbors, fate) if chunk else "<i>Select a result or a candidate.</i>")


def chunk_html(c: Chunk, neighbors: tuple[str | None, str | None], fate: str = "") -> str:
    t = theme.current()
    esc = html.escape

    def block(title: str, text: str) -> str:
        if not text:
            return ""
        body = esc(text).replace("\n", "<br>")
        return f"<h4 style='margin-bottom:2px'>{esc(title)}</h4><div>{body}</div>"

    meta = [
        ("kind", f"{c.kind} chunk #{c.order}"), ("session", c.session_id), ("time", c.time or "—"),
        ("memory kind", c.memory_kind), ("memory score", f"{c.memory_score:g}"),
        ("tags", ", ".join(c.tags) or "—"), ("task tag", c.task_tag or "—"),
        ("previous", neighbors[0] or "—"), ("next", neighbors[1] or "—"),
        ("dialogue ids", ", ".join(c.dia_ids) or "—"),
    ]
    if fate:
        meta.insert(0, ("fate", fate))
    rows = "".join(f"<tr><td style='color:{t.muted};padding-right:8px'>{esc(k)}</td><td>{esc(v)}</td></tr>"
                   for k, v in meta)
    facets = "".join(block(name, getattr(c, attr)) for name, attr in
                     (("personal info", "personal_info"), ("preferences", "preferences"), ("events", "events")))
    return (f"<h3 style='margin:0'>{esc(c.memory_id)}</h3><table>{rows}</table>{facets}"
            f"{block('user', c.user_text)}{block('assistant', c.assistant_text)}"
            f"{block('next user text', c.next_user_text)}")
