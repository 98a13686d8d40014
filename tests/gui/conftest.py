"""GUI tests run offscreen, with a per-test app home and a fake engine over synthetic pools."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt

from pathlib import Path

import pytest

from core.config import Config
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from tests.gui.fixtures import FakeEngine, evaluation_window, fake_builder, scan_engine  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
def gui_store(tmp_path_factory, model_cache) -> Path:
    """A demo store of the test module's own: the session's `demo_engine` may hold the shared one
    open, and runs of the window write their history beside the store."""
    from core.recall.engine import DEMO_DATASET, build_store

    location = tmp_path_factory.mktemp("gui-stores") / "demo"
    build_store(DEMO_DATASET, location, cache_dir=model_cache)
    return location


@pytest.fixture
def app_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("MEMSENSE_GUI_HOME", str(home))
    home.mkdir()
    return home


@pytest.fixture
def make_window(qtbot, app_home):
    """Build a MainWindow over fake engines: make_window(delay=0.0, builder=None, open=True)."""
    from memsense_gui.state import paths
    from memsense_gui.window.main_window import MainWindow

    engines: list[FakeEngine] = []

    def make(delay: float = 0.0, builder=None, open_store: bool = True, **engine_kwargs):
        def factory(location: str) -> FakeEngine:
            engine = FakeEngine(location, delay=delay, **engine_kwargs)
            engines.append(engine)
            return engine

        window = MainWindow(app_home, paths.settings(app_home), engine_factory=factory,
                            store_builder=builder or fake_builder())
        window.engines = engines
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        if open_store:
            with qtbot.waitSignal(window.ctx.model_loaded, timeout=10_000):
                window.stores.open_store(str(app_home / "stores" / "fake"))
        return window

    return make


@pytest.fixture
def ranked_window(qtbot, make_window):
    """A window with a query already run."""
    window = make_window()
    window.query_edit.setText("what did they say about travel")
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=10_000):
        window.queries.run_query()
    return window


@pytest.fixture(scope="module")
def pool():
    """A small synthetic pool: ten sessions of eight turns."""
    return synthetic_pool(n_sessions=10, turns_per_session=8, dim=16, seed=3)


@pytest.fixture(scope="module")
def ranking(pool):
    return rerank(pool, Config(top_k=6))
