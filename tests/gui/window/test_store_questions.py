"""Question sets belong to stores: switching stores switches question sets, the demo store always
comes with its 35 questions, a store ingested from a dataset with questions offers them at once, and
a question file about another store's users is refused with one line."""
from __future__ import annotations

import json

import pytest

from core.errors import MemsenseError
from core.evaluation.store_questions import attach_dataset, attached
from core.recall.engine import DEMO_QUESTIONS
from memsense_gui.state import paths
from tests.gui.fixtures import FakeEngine

DEMO_USERS = ["demo-ana", "demo-mei", "demo-raj"]
CONV_USERS = ["conv-26", "conv-30"]


def _conv_questions(tmp_path):
    path = tmp_path / "conv-questions.json"
    path.write_text(json.dumps({"questions": [
        {"user": u, "question": f"question {n} of {u}?", "answer": "", "category": 1, "evidence": ["D1:1"]}
        for u in CONV_USERS for n in range(3)]}), encoding="utf-8")
    return path


def _open(qtbot, window, location):
    with qtbot.waitSignal(window.ctx.users_loaded, timeout=10_000):
        window.stores.open_store(str(location))


def test_switching_stores_switches_question_sets(qtbot, make_window, app_home, tmp_path, monkeypatch):
    monkeypatch.setattr(FakeEngine, "users", lambda self: DEMO_USERS if "demo" in self.location else CONV_USERS)
    window = make_window(open_store=False)
    demo, locomo = paths.demo_store_dir(app_home), app_home / "stores" / "locomo"
    assert attach_dataset(locomo, _conv_questions(tmp_path)) == 6  # as `memsense ingest` does

    _open(qtbot, window, demo)
    sets, picker = window.ctx.question_sets, window.picker
    assert sets.path == DEMO_QUESTIONS and len(picker.questions) == 35
    assert DEMO_QUESTIONS.resolve() in attached(demo)

    _open(qtbot, window, locomo)  # ingested from a dataset with questions: they are offered at once
    assert sets.path == tmp_path / "conv-questions.json" and len(picker.questions) == 6
    with pytest.raises(MemsenseError, match="about users this store does not hold"):
        sets.set_path(DEMO_QUESTIONS)  # the demo's questions are not this store's
    assert sets.path == tmp_path / "conv-questions.json"

    _open(qtbot, window, demo)  # back to the demo: its 35 questions, not lost
    assert sets.path == DEMO_QUESTIONS and len(picker.questions) == 35 and picker.button.text() == "35 questions"

    _open(qtbot, window, app_home / "stores" / "empty-of-questions")  # users of neither file
    monkeypatch.setattr(FakeEngine, "users", lambda self: ["someone-else"])
    _open(qtbot, window, app_home / "stores" / "other")
    assert sets.path is None and picker.questions == []
