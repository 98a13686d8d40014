"""A model is identified by the content of its files, in any folder (core.recall.embedding.model_identity.model_key),
and a store accepts only the model that built it (core.recall.engine.check_model)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from core.recall.embedding.model_identity import HASH_MEMO, legacy_model_key, model_key
from core.recall.engine import check_model
from core.errors import MemsenseError
from core.recall.store import StoreMeta
from core.records import Chunk


def _model(folder: Path, weights: bytes = b"\x01" * 64) -> Path:
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "modules.json").write_text("[]")
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "README.md").write_text("docs do not change the model")
    return folder


def test_the_same_files_in_another_folder_are_the_same_model(tmp_path):
    a = _model(tmp_path / "all-MiniLM-L6-v2")
    b = shutil.copytree(a, tmp_path / "copy-with-another-name")
    (b / "README.md").write_text("edited")
    assert model_key(a) == model_key(b)
    assert legacy_model_key(a) != legacy_model_key(b)  # the old key refused this copy


def test_a_fine_tuned_model_with_the_same_name_and_sizes_is_another_model(tmp_path):
    base = _model(tmp_path / "a" / "model")
    tuned = _model(tmp_path / "b" / "model", weights=b"\x01" * 63 + b"\x02")
    assert legacy_model_key(base) == legacy_model_key(tuned)  # the old key could not tell them apart
    assert model_key(base) != model_key(tuned)
    (tuned / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert model_key(tuned, None) != model_key(_model(tmp_path / "c" / "model", weights=b"\x01" * 63 + b"\x02"))


def test_the_hash_is_remembered_by_path_size_and_mtime(tmp_path):
    model, memo = _model(tmp_path / "model"), tmp_path / "cache"
    key = model_key(model, memo)
    remembered = json.loads((memo / HASH_MEMO).read_text())[str(model)]
    assert remembered["key"] == key
    remembered["key"] = "sha256-remembered"
    (memo / HASH_MEMO).write_text(json.dumps({str(model): remembered}))
    assert model_key(model, memo) == "sha256-remembered"  # not hashed again
    weights = model / "model.safetensors"
    weights.write_bytes(b"\x03" * 64)  # same size; a new mtime
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    assert model_key(model, memo) not in ("sha256-remembered", key)


def test_a_damaged_memo_is_ignored_and_rewritten(tmp_path):
    model, memo = _model(tmp_path / "model"), tmp_path / "cache"
    memo.mkdir()
    (memo / HASH_MEMO).write_bytes(b"\xff not json")
    assert model_key(model, memo) == model_key(model)
    assert json.loads((memo / HASH_MEMO).read_text())[str(model)]["key"] == model_key(model)


# -- the store's check ---------------------------------------------------------------------------------

def _chunk() -> Chunk:
    return Chunk("u:S001:P00", "u", "u:S001", 1, "session", 0, "", "hello", "there")


class _Store:
    location = "stores/x"

    def __init__(self, vec):
        self.vec = np.array([vec], dtype=np.float64)

    def read_user(self, user_id):
        return [_chunk()], self.vec


def _embedder(tmp_path, vec, key="sha256-new"):
    path = _model(tmp_path / "model")
    return SimpleNamespace(key=key, model_path=path, encode=lambda texts: np.array([vec], dtype=np.float32))


def test_a_store_of_another_model_is_refused_naming_both(tmp_path):
    emb = _embedder(tmp_path, [1.0, 0.0])
    with pytest.raises(MemsenseError, match=r"another embedding model .*sha256-old.*--model"):
        check_model(_Store([1.0, 0.0]), StoreMeta("sha256-old", 2, {"u": "c"}), emb)
    check_model(_Store([1.0, 0.0]), StoreMeta("sha256-new", 2, {"u": "c"}), emb)  # its own model


def test_an_older_store_is_checked_by_re_embedding_one_chunk(tmp_path):
    emb = _embedder(tmp_path, [0.6, 0.8])
    legacy = StoreMeta(legacy_model_key(emb.model_path), 2, {"u": "c"})
    check_model(_Store([3.0, 4.0]), legacy, emb)  # same vector (any length): the same model
    with pytest.raises(MemsenseError, match="different model that has the same folder name and file sizes"):
        check_model(_Store([0.8, -0.6]), legacy, emb)
    with pytest.raises(MemsenseError, match="another embedding model"):
        check_model(_Store([3.0, 4.0]), StoreMeta("minilm-0123456789", 2, {"u": "c"}), emb)
