"""Every engine the app can open, and the GUI tests' fake, satisfy one `RecallEngine` protocol."""
from __future__ import annotations

import inspect

import pytest

from core.recall.engine import Engine
from core.recall.pg_engine import PostgresEngine
from core.recall.protocol import RecallEngine
from tests.gui.fixtures import FakeEngine
from tools.bench_gui import SyntheticEngine

MEMBERS = [name for name, _ in inspect.getmembers(RecallEngine, inspect.isfunction) if not name.startswith("_")]


@pytest.mark.parametrize("engine", [Engine, PostgresEngine, FakeEngine, SyntheticEngine], ids=lambda c: c.__name__)
def test_engine_satisfies_the_protocol(engine):
    assert issubclass(engine, RecallEngine)
    for name in MEMBERS:
        wanted = list(inspect.signature(getattr(RecallEngine, name)).parameters)
        got = list(inspect.signature(getattr(engine, name)).parameters)
        assert got[: len(wanted)] == wanted, f"{engine.__name__}.{name}{tuple(got)} does not take {tuple(wanted)}"
    depth = inspect.signature(engine.recall).parameters["depth"]
    assert depth.default is not inspect.Parameter.empty, f"{engine.__name__}.recall: the app recalls without a depth"


def test_the_protocol_lists_what_the_app_calls():
    assert set(MEMBERS) == {"users", "chunks", "load_model", "recall", "close"}
