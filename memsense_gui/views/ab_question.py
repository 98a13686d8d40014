"""One question under presets A and B side by side: each side's results with their snippets,
gold sessions starred, each side's metric, and the gold sessions it missed."""
from __future__ import annotations

import html
from typing import Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QTextBrowser, QVBoxLayout, QWidget

from core.evaluation.evaluate import QuestionOutcome, category_name
from core.recall.lexical.snippet import chunk_snippet
from core.records import Chunk
from memsense_gui import theme


class ABQuestionView(QWidget):
    """Fill with `show_question`; empty until a question is picked in the comparison."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel("Click a question in Compare presets to see it under A and B side by side.")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.sides = (QTextBrowser(), QTextBrowser())
        for side, name in zip(self.sides, ("ab-a", "ab-b")):
            side.setObjectName(name)
        row = QHBoxLayout()
        for side in self.sides:
            row.addWidget(side, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.title)
        layout.addLayout(row, 1)

    def show_question(self, question: str, metric: str, a: tuple[str, QuestionOutcome], b: tuple[str, QuestionOutcome],
                      chunks: Mapping[str, Chunk]) -> None:
        """`a`, `b`: (preset name, that preset's outcome for the question); `chunks` by memory id
        (the question's recall pool) for the snippets."""
        outcome = a[1]
        gold = ", ".join(f"S{s:03d}" for s in outcome.gold_sessions)
        self.title.setText(f"<b>{html.escape(question)}</b> — {html.escape(category_name(outcome.category))}, "
                           f"{html.escape(outcome.user_id)}; gold sessions {gold}")
        for side, label, (name, o) in zip(self.sides, ("A", "B"), (a, b)):
            side.setHtml(side_html(label, name, o, metric, question, chunks))


def side_html(label: str, preset: str, o: QuestionOutcome, metric: str, question: str,
              chunks: Mapping[str, Chunk]) -> str:
    t = theme.current()
    value = o.metrics[metric]
    out = [f"<p><b>{label} · {html.escape(preset)}</b> — {html.escape(metric)} = <b>{value:.2f}</b></p><table>"]
    gold = set(o.gold_sessions)
    for rank, (mid, session) in enumerate(zip(o.result_ids, o.sessions), start=1):
        chunk = chunks.get(mid)
        snippet = chunk_snippet(chunk, question).html() if chunk is not None else ""
        mark = "★ " if session in gold else ""
        style = f" style='background:{t.gold}'" if session in gold else ""
        out.append(f"<tr{style}><td valign='top'><b>#{rank}</b></td><td valign='top'>{mark}S{session:03d}</td>"
                   f"<td>{snippet}</td></tr>")
    out.append("</table>")
    missed = sorted(gold - set(o.sessions))
    if missed:
        out.append(f"<p>gold not returned: <b style='color:{t.down}'>"
                   + ", ".join(f"S{s:03d}" for s in missed) + "</b></p>")
    return "".join(out)
