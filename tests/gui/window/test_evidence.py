"""A judged question's evidence turns are highlighted in the Chunk panel, whether the question is
opened from the case list or typed; another query highlights nothing."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.gui.fixtures import FakeEngine
from memsense_gui.views.dock import DockId

QUESTION = "which message of the session"


@pytest.fixture
def messages(monkeypatch):
    """Session chunks of the fake engine hold three messages each, with dialogue ids D<s>:1..3."""
    plain = FakeEngine.pool

    def pool(self, user_id, query="q"):
        p = plain(self, user_id, query)
        chunks = tuple(replace(c, user_text="\n\n".join(f"A: message {k} of session {c.session_number}"
                                                        for k in (1, 2, 3)),
                               dia_ids=tuple(f"D{c.session_number}:{k}" for k in (1, 2, 3)))
                       if c.kind == "session" else c for c in p.chunks)
        return replace(p, chunks=chunks)

    monkeypatch.setattr(FakeEngine, "pool", pool)


def _cases(tmp_path):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": [{"user": "synth-a", "question": QUESTION, "answer": "message 2",
                                               "category": 1, "evidence": ["D1:2"]}]}))
    return path


def _chunk_html(w) -> str:
    return w.chunk_panel.browser.toHtml()


def test_evidence_turns_are_highlighted_in_the_chunk_panel(qtbot, make_window, tmp_path, messages):
    w = make_window()
    w.cases.source.set_path(_cases(tmp_path))
    w.raise_dock(DockId.CASES)
    qtbot.waitUntil(lambda: w.cases_panel.model.rowCount() == 1, timeout=10_000)
    w.cases_panel.select_row(0)
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.cases_panel.open_selected()
    assert w.ctx.session.evidence == frozenset({"D1:2"})
    w.raise_dock(DockId.CHUNK)
    w.inspector.focus_chunk("synth-a:S001:P0")
    assert w.chunk_panel.evidence_shown == ("D1:2",)
    text = w.chunk_panel.browser.toPlainText()
    assert "[evidence D1:2] A: message 2 of session 1" in text
    assert "[evidence D1:1]" not in text and "[evidence D1:3]" not in text
    w.inspector.focus_chunk("synth-a:S002:P0")  # holds none of the evidence
    assert w.chunk_panel.evidence_shown == () and "none of the question's 1 evidence turns" in \
        w.chunk_panel.browser.toPlainText()

    # typed, the same question finds its evidence among the loaded cases; another query has none
    for query, expected in ((f"  {QUESTION.upper()} ", frozenset({"D1:2"})), ("something else", frozenset())):
        w.query_edit.setText(query)
        with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
            w.queries.run_query()
        assert w.ctx.session.evidence == expected
        w.inspector.focus_chunk("synth-a:S001:P0")
        assert w.chunk_panel.evidence_shown == tuple(expected)
        assert ("[evidence" in w.chunk_panel.browser.toPlainText()) == bool(expected)
