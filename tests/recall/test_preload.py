"""`core.recall.embedding.embedder.preload`: the app loads the model while its window is built, and the engine's
`Embedder` takes that model instead of loading its own."""
from __future__ import annotations

import pytest

from core.errors import MemsenseError
from core.recall.embedding import embedder as embed
from core.recall.embedding.embedder import Embedder, preload


@pytest.fixture(autouse=True)
def no_preloads(monkeypatch):
    monkeypatch.setattr(embed, "_preloads", {})


def test_an_embedder_takes_the_model_loaded_ahead(model_cache, monkeypatch):
    preload(cache_dir=model_cache)
    (early,) = embed._preloads.values()
    model = early.result(timeout=120)
    loads = []
    monkeypatch.setattr(Embedder, "_load_now", lambda self: loads.append(self) or model)
    embedder = Embedder(cache_dir=model_cache)
    try:
        assert embedder.encode(["where did Ana run?"]).shape == (1, 384)
        assert embedder._model is model and loads == []
    finally:
        embedder.close()
    other = Embedder(cache_dir=model_cache, backend="torch")  # another backend is another model
    try:
        other.load()
        assert loads == [other]
    finally:
        other.close()


def test_a_preload_that_fails_leaves_the_error_to_the_embedder(model_cache, monkeypatch):
    def broken(self):
        raise MemsenseError("cannot load the embedding model from X: damaged")

    monkeypatch.setattr(Embedder, "_load_now", broken)
    preload(cache_dir=model_cache)
    (early,) = embed._preloads.values()
    assert isinstance(early.exception(timeout=60), MemsenseError)
    embedder = Embedder(cache_dir=model_cache)
    try:
        with pytest.raises(MemsenseError, match="damaged"):  # its own attempt, reported where it is used
            embedder.load()
    finally:
        embedder.close()


def test_preload_of_a_missing_model_folder_does_nothing(tmp_path):
    preload(model=tmp_path / "no-such-model", cache_dir=tmp_path / "cache")
    assert embed._preloads == {}
