from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def shared_file(*parts: str) -> Path:
    """A file under ../shared, or skip the test with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the shared folder beside the repository)")
    return path


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory) -> Path:
    """One embedding cache for the whole run, so each text is embedded once."""
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory, model_cache) -> Path:
    from core.engine import DEMO_DATASET, build_store

    store = tmp_path_factory.mktemp("demo-store") / "store"
    build_store(DEMO_DATASET, store, cache_dir=model_cache)
    return store


@pytest.fixture(scope="session")
def demo_engine(demo_store, model_cache):
    from core.engine import Engine

    engine = Engine(demo_store, cache_dir=model_cache)
    yield engine
    engine.close()
