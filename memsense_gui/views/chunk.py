"""The chunk itself: content, tags, facets, neighbors, next user text; when the query is a
judged question, its evidence turns are highlighted in the text."""
from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from core.recall.lexical.snippet import message_parts
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
        self.evidence_shown: tuple[str, ...] = ()

    def show_chunk(self, chunk: Chunk | None, neighbors: tuple[str | None, str | None] = (None, None),
                   fate: str = "", evidence: frozenset[str] = frozenset()) -> None:
        """`evidence`: the judged question's evidence turn ids; those in this chunk are highlighted."""
        self.memory_id = chunk.memory_id if chunk else None
        self.evidence_shown = tuple(d for d in chunk.dia_ids if d in evidence) if chunk else ()
        self.browser.setHtml(chunk_html(chunk, neighbors, fate, evidence) if chunk
                             else "<i>Select a result or a candidate.</i>")
        if self.evidence_shown:
            self.browser.scrollToAnchor(EVIDENCE_ANCHOR)


EVIDENCE_ANCHOR = "evidence"
"""The first evidence message: the panel scrolls to it."""


def _text_html(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


def user_html(c: Chunk, evidence: frozenset[str]) -> str:
    """The chunk's user side; each evidence message on the theme's gold background, with its id.
    A chunk whose messages cannot be told apart is highlighted whole when it holds evidence."""
    if not evidence & set(c.dia_ids):
        return _text_html(c.user_text)
    gold = theme.current().gold
    parts = message_parts(c)
    if len(parts) == 1 and parts[0][0] is None:
        ids = ", ".join(d for d in c.dia_ids if d in evidence)
        return (f"<div style='background:{gold}'><a name='{EVIDENCE_ANCHOR}'></a><b>[evidence {html.escape(ids)}]</b> "
                f"{_text_html(c.user_text)}</div>")
    out, anchor = [], f"<a name='{EVIDENCE_ANCHOR}'></a>"
    for dia_id, text in parts:
        if dia_id in evidence:
            out.append(f"<p style='background:{gold}'>{anchor}<b>[evidence {html.escape(dia_id)}]</b> "
                       f"{_text_html(text)}</p>")
            anchor = ""
        else:
            out.append(f"<p>{_text_html(text)}</p>")
    return "".join(out)


def chunk_html(c: Chunk, neighbors: tuple[str | None, str | None], fate: str = "",
               evidence: frozenset[str] = frozenset()) -> str:
    t = theme.current()
    esc = html.escape

    def block(title: str, text: str, body: str | None = None) -> str:
        if not text:
            return ""
        return f"<h4 style='margin-bottom:2px'>{esc(title)}</h4><div>{body or _text_html(text)}</div>"

    meta = [
        ("kind", f"{c.kind} chunk #{c.order}"), ("session", c.session_id), ("time", c.time or "—"),
        ("memory kind", c.memory_kind), ("memory score", f"{c.memory_score:g}"),
        ("tags", ", ".join(c.tags) or "—"), ("task tag", c.task_tag or "—"),
        ("previous", neighbors[0] or "—"), ("next", neighbors[1] or "—"),
        ("dialogue ids", ", ".join(c.dia_ids) or "—"),
    ]
    if fate:
        meta.insert(0, ("fate", fate))
    if evidence:
        held = [d for d in c.dia_ids if d in evidence]
        meta.insert(0, ("evidence", f"{', '.join(held)} highlighted below" if held else
                        f"none of the question's {len(evidence)} evidence turns is in this chunk"))
    rows = "".join(f"<tr><td style='color:{t.muted};padding-right:8px'>{esc(k)}</td><td>{esc(v)}</td></tr>"
                   for k, v in meta)
    facets = "".join(block(name, getattr(c, attr)) for name, attr in
                     (("personal info", "personal_info"), ("preferences", "preferences"), ("events", "events")))
    return (f"<h3 style='margin:0'>{esc(c.memory_id)}</h3><table>{rows}</table>{facets}"
            f"{block('user', c.user_text, user_html(c, evidence))}{block('assistant', c.assistant_text)}"
            f"{block('next user text', c.next_user_text)}")
