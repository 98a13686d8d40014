"""Every engine the app can open satisfies one `RecallEngine` protocol (the GUI's fake and
benchmark engine are checked in tests/gui, which may import Qt)."""
from __future__ import annotations

import inspect

import pytest

from core.recall.engine import Engine
from core.recall.memsense.engine import PostgresEngine
from core.recall.protocol import RecallEngine
from tests.fixtures import assert_recall_engine

MEMBERS = [name for name, _ in inspect.getmembers(RecallEngine, inspect.isfunction) if not name.startswith("_")]


@pytest.mark.parametrize("engine", [Engine, PostgresEngine], ids=lambda c: c.__name__)
def test_engine_satisfies_the_protocol(engine):
    assert_recall_engine(engine)


def test_the_protocol_lists_what_the_app_calls():
    assert set(MEMBERS) == {"users", "chunks", "load_model", "recall", "recall_for", "note", "close"}
    properties = {name for name, v in vars(RecallEngine).items() if isinstance(v, property)}
    assert set(RecallEngine.__annotations__) | properties == {"location", "pools_deepen", "model_text", "model_path"}
