"""The embedding model run by onnxruntime, exported once from the model's own weights.

Why: importing torch and sentence-transformers and loading MiniLM takes about 8 s on a 2-core
machine, while onnxruntime plus the `tokenizers` library is ready in under a second and embeds a
query without importing torch at all; it also needs less CPU per text than the torch path
(README, "Embedding"; tools/bench_embed.py). The vectors are the same to float noise (max |diff| ~2e-7), so stores
keep the model's content key and need no re-ingest.

The export traces the whole SentenceTransformer forward (transformer, pooling, normalisation)
with `torch.onnx.export`, so no pooling is re-implemented here. It lands in the cache folder as
`onnx/<model key>.onnx` beside a sidecar JSON holding the key, the tokenizer settings and the
exporting model's vectors for a few probe texts. Every load re-embeds the probes and refuses a
file that no longer gives those vectors (damaged, or another model's), so a bad file is never
used: the caller exports it again or falls back to torch.

Speed (tools/bench_embed.py): the model is traced with eager attention, so that onnxruntime's
own BERT optimizer (`onnxruntime.transformers.optimizer`, fp32, exact GELU) can fuse each layer's
attention, skip-layer-norms and bias-GELUs; that fused graph is kept beside the export as
`<model key>.fused.onnx` and checked against the same probe vectors. A damaged fused file is
said in one warning line and made again from the plain export, which is used whenever fusing is
impossible. Texts are cut into batches of about `TOKENS` padded tokens (sorted by length, so a
batch pads little) and each core runs its own batches on one shared session with one thread,
which wastes no time at per-operator barriers.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from core.atomic import write_text_atomic
from core.machine import usable_cpus

FORMAT = 2
"""2: traced with eager attention, which the fuser recognises (1 used PyTorch's SDPA, whose traced
masking costs ~10 % of the time and defeats attention fusion); older copies are exported again."""
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TOLERANCE = 1e-5
"""Largest |difference| allowed between the ONNX and the torch vector of a probe (measured: ~2e-7)."""
PROBES = (
    "How many races has Ana run in 2024?",
    "ok",
    "  Café naïve résumé — 東京 🙂 spaces   around  ",
    "Melanie: I signed up for a pottery class last week and made a bowl. " * 4,
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted. " * 40,  # past 256 tokens
)
TOKENS = 512
"""Padded tokens per onnxruntime call (rows x longest row): short texts go many to a call, texts
of 256 tokens two. Measured on 619 locomo-dev texts (55,226 tokens) at load 3.3-3.9, median CPU
seconds: 256-768 tokens 14.8-15.2, 1,024 tokens 15.8, 2,048 tokens 17.0; batches of 16 texts
with two threads per call (the earlier way) 21.8-25.7."""
log = logging.getLogger("memsense.embed")


class Unusable(Exception):
    """The ONNX copy cannot be used (missing, damaged, another model's, or no onnxruntime).
    `settled`: an earlier export of this model already failed; do not try again."""

    def __init__(self, reason: str, settled: bool = False, stale: bool = False):
        super().__init__(reason)
        self.settled = settled
        self.stale = stale  # an older format: exported again without a warning


def paths(cache_dir: Path, key: str) -> tuple[Path, Path]:
    folder = Path(cache_dir) / "onnx"
    return folder / f"{key}.onnx", folder / f"{key}.json"


def fused_path(cache_dir: Path, key: str) -> Path:
    return Path(cache_dir) / "onnx" / f"{key}.fused.onnx"


def _failed_marker(cache_dir: Path, key: str) -> Path:
    """Why this model could not be exported, so each start does not import torch to fail again;
    delete it to retry."""
    return paths(cache_dir, key)[0].with_suffix(".failed")


class OnnxModel:
    """The sentence-transformers calls `Embedder` makes, answered by onnxruntime."""

    def __init__(self, onnx_file: Path, model_dir: Path, meta: dict[str, Any]):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise Unusable(f"onnxruntime or tokenizers is not installed ({exc})") from None
        try:
            self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            self.tokenizer.enable_truncation(int(meta["max_length"]))
            self.tokenizer.no_padding()
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1  # one thread per call; `encode` runs a call per core
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.session = ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a damaged file fails inside onnxruntime in many ways
            raise Unusable(f"{onnx_file} does not load ({str(exc).splitlines()[0][:200]})") from None
        self.file = Path(onnx_file)
        self.inputs = [name for name in meta["inputs"] if name in INPUTS]
        self.dim = int(meta["dim"])
        self.workers = usable_cpus()
        self.texts_per_call = 256  # texts `Embedder` hands over at a time (enough batches for every core)

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def tokenize(self, texts: Sequence[str]) -> list:
        """The model's tokens of each text (truncated as sentence-transformers does)."""
        return self.tokenizer.encode_batch(list(texts))

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        return self.encode_tokens(self.tokenize(texts))

    def encode_tokens(self, encodings: Sequence[Any]) -> np.ndarray:
        """Unit float32 vectors of tokenized texts: sorted by length, cut into batches of about
        `TOKENS` padded tokens, the batches shared out to one worker per core."""
        lengths = np.array([len(e.ids) for e in encodings], dtype=np.int64)
        order = np.argsort(lengths, kind="stable")
        batches, start = [], 0
        while start < len(order):
            end = start + 1  # rows are sorted, so the row at `end` is the batch's longest
            while end < len(order) and (end - start + 1) * lengths[order[end]] <= TOKENS:
                end += 1
            batches.append(order[start:end])
            start = end
        out = np.zeros((len(encodings), self.dim), dtype=np.float32)

        def run(rows: np.ndarray) -> None:
            width = int(lengths[rows].max())
            feed = {name: np.zeros((len(rows), width), dtype=np.int64) for name in INPUTS}
            for i, row in enumerate(rows):
                e, n = encodings[row], lengths[row]
                feed["input_ids"][i, :n], feed["attention_mask"][i, :n] = e.ids, 1
                feed["token_type_ids"][i, :n] = e.type_ids
            out[rows] = self.session.run(None, {name: feed[name] for name in self.inputs})[0]

        if len(batches) > 1 and self.workers > 1:  # onnxruntime runs concurrent calls on one session
            with ThreadPoolExecutor(min(self.workers, len(batches))) as pool:
                list(pool.map(run, batches))
        else:
            for rows in batches:
                run(rows)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)


def _checked(model: OnnxModel, expected: np.ndarray) -> OnnxModel:
    if not np.all(np.abs(model.encode(PROBES) - expected) <= TOLERANCE):
        raise Unusable(f"{model.file} no longer gives the model's vectors (damaged or replaced)")
    return model


PACKAGED_GRAPH = "model.onnx"
"""A packaged model's fused graph (memsense-minilm-onnx), beside its tokenizer.json and `PACKAGED_META`."""
PACKAGED_META = "memsense-onnx.json"
"""A packaged model's metadata: its key, tokenizer settings and probe vectors (`export`'s sidecar)."""


def load_packaged(folder: Path, key: str) -> OnnxModel:
    """The fused graph a model package ships (memsense-minilm-onnx), refused (`Unusable`) unless it
    still gives the probe vectors its metadata holds: another model's graph or a damaged file is
    never used."""
    try:
        meta = json.loads((Path(folder) / PACKAGED_META).read_text(encoding="utf-8"))
        expected = np.array(meta["vectors"], dtype=np.float32)
        ok = meta["format"] == FORMAT and meta["model_key"] == key and expected.shape == (len(PROBES), meta["dim"])
    except (OSError, ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise Unusable(f"its {PACKAGED_META} is damaged or of another format (this app reads format {FORMAT})")
    model = OnnxModel(Path(folder) / PACKAGED_GRAPH, Path(folder), meta)
    if not np.all(np.abs(model.encode(PROBES) - expected) <= TOLERANCE):
        raise Unusable(f"its graph {PACKAGED_GRAPH} does not give the model's probe vectors (damaged or another model's)")
    return model


def load(model_dir: Path, cache_dir: Path, key: str) -> OnnxModel:
    """The checked ONNX copy of the model `key`, fused where it can be; `Unusable` says why not."""
    onnx_file, meta_file = paths(cache_dir, key)
    failed = _failed_marker(cache_dir, key)
    if failed.is_file():
        raise Unusable(f"{failed.read_text(encoding='utf-8', errors='replace').strip()} (noted in {failed}; "
                       "delete it to try again)", settled=True)
    if not onnx_file.is_file() or not meta_file.is_file():
        raise Unusable(f"no ONNX copy of the model in {onnx_file.parent}")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        expected = np.array(meta["vectors"], dtype=np.float32)
        stale = meta["format"] in range(1, FORMAT) and meta["model_key"] == key  # not a damaged number
        ok = meta["format"] == FORMAT and meta["model_key"] == key and expected.shape == (len(PROBES), meta["dim"])
    except (OSError, ValueError, KeyError, TypeError):
        ok = stale = False
    if stale:
        raise Unusable(f"{onnx_file} is an older export (format {meta['format']}, now {FORMAT})", stale=True)
    if not ok:
        raise Unusable(f"{meta_file} is damaged or belongs to another model")
    fused = fused_path(cache_dir, key)
    warned = False
    if fused.is_file():
        try:
            return _checked(OnnxModel(fused, model_dir, meta), expected)
        except Unusable as exc:
            log.warning("%s; fusing %s again", exc, onnx_file)
            warned = True
    plain = _checked(OnnxModel(onnx_file, model_dir, meta), expected)
    return _fuse(plain, model_dir, fused, meta, expected, warned)


def _fuse(plain: OnnxModel, model_dir: Path, fused: Path, meta: dict[str, Any], expected: np.ndarray,
          warned: bool) -> OnnxModel:
    """The plain export's fused graph, made once and checked; the plain model if that fails
    (said once; `<key>.fused.failed` keeps later loads from trying again)."""
    marker = fused.with_suffix(".failed")
    if marker.is_file():
        return plain
    tmp = fused.with_name(f".{fused.name}.{os.getpid()}.tmp")
    try:
        try:
            from onnxruntime.transformers import optimizer
        except ImportError as exc:
            raise Unusable(f"onnxruntime's transformer optimizer cannot be imported ({exc})") from None
        folder = str(Path(optimizer.__file__).parent)
        for name, module in list(sys.modules.items()):  # its modules log a note on every fusion pass
            if str(getattr(module, "__file__", "") or "").startswith(folder):
                logging.getLogger(name).setLevel(logging.WARNING)
        graph = optimizer.optimize_model(str(plain.file), model_type="bert", num_heads=int(meta.get("heads", 0)),
                                         hidden_size=int(meta.get("hidden", 0)), opt_level=0, use_gpu=False)
        if not graph.get_fused_operator_statistics().get("Attention"):
            raise Unusable("no attention layer could be fused")
        graph.save_model_to_file(str(tmp))
        os.replace(tmp, fused)
        return _checked(OnnxModel(fused, model_dir, meta), expected)
    except Exception as exc:  # the optimizer fails in many ways on graphs it does not know
        fused.unlink(missing_ok=True)
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        (log.info if warned else log.warning)("cannot fuse %s (%s); embedding with it unfused (same vectors, slower)",
                                              plain.file, reason)
        try:
            write_text_atomic(marker, f"{reason}\n", parents=True)
        except OSError:
            pass  # only costs trying again next time
        return plain
    finally:
        tmp.unlink(missing_ok=True)


def export(st_model: Any, model_dir: Path, cache_dir: Path, key: str) -> OnnxModel:
    """Export a loaded SentenceTransformer, check it against torch, and keep it; `Unusable` if the
    model cannot be run this way (no tokenizer.json, other inputs, vectors that disagree); that
    verdict is noted beside it, so later loads go straight to torch."""
    onnx_file, meta_file = paths(cache_dir, key)
    try:
        onnx_file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Unusable(f"cannot create {onnx_file.parent} ({exc.strerror})") from None
    try:
        return _export(st_model, model_dir, cache_dir, key)
    except Unusable as exc:
        if not exc.settled:
            try:
                write_text_atomic(_failed_marker(cache_dir, key), f"{exc}\n", parents=True)
            except OSError:
                pass  # only costs trying again next time
        raise


def _export(st_model: Any, model_dir: Path, cache_dir: Path, key: str) -> OnnxModel:
    import torch

    onnx_file, meta_file = paths(cache_dir, key)
    if not (model_dir / "tokenizer.json").is_file():
        raise Unusable(f"{model_dir} has no tokenizer.json for the `tokenizers` library")
    max_length = int(st_model.max_seq_length)
    features = st_model.tokenizer(list(PROBES), padding=True, truncation=True, max_length=max_length,
                                  return_tensors="pt")
    names = [name for name in INPUTS if name in features]
    if names[:2] != ["input_ids", "attention_mask"] or set(features) - set(INPUTS):
        raise Unusable(f"the model takes inputs {sorted(features)}, not {list(INPUTS)}")

    class Forward(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = st_model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.model(dict(zip(names, tensors)))["sentence_embedding"]

    tmp = onnx_file.with_name(f".{onnx_file.name}.{os.getpid()}.tmp")
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    auto = getattr(st_model[0], "auto_model", None) if len(st_model) else None  # the transformers model
    config = getattr(auto, "config", None)
    attention = getattr(config, "_attn_implementation", None)
    eager = attention not in (None, "eager") and hasattr(auto, "set_attn_implementation")
    for stale in (fused_path(cache_dir, key), fused_path(cache_dir, key).with_suffix(".failed")):
        stale.unlink(missing_ok=True)  # made from the copy being replaced
    try:
        if eager and auto is not None:
            auto.set_attn_implementation("eager")  # the traced graph the fuser recognises (FORMAT)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about Python branches fixed at trace time
            torch.onnx.export(Forward().eval(), tuple(features[n] for n in names), str(tmp), input_names=names,
                              output_names=["sentence_embedding"], dynamic_axes={**axes, "sentence_embedding": {0: "batch"}},
                              opset_version=17, dynamo=False)
        reference = st_model.encode(list(PROBES), batch_size=len(PROBES), normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
        meta = {"format": FORMAT, "model_key": key, "max_length": max_length, "inputs": names,
                "dim": int(reference.shape[1]), "vectors": reference.tolist(),
                "heads": int(getattr(config, "num_attention_heads", 0) or 0),
                "hidden": int(getattr(config, "hidden_size", 0) or 0),
                "exported_with": {"torch": torch.__version__}}
        model = OnnxModel(tmp, model_dir, meta)
        ids = features["input_ids"].tolist()
        mask = features["attention_mask"].tolist()
        ours = [e.ids for e in model.tokenizer.encode_batch(list(PROBES))]
        if ours != [[t for t, m in zip(row, keep) if m] for row, keep in zip(ids, mask)]:
            raise Unusable("the `tokenizers` library splits the probe texts differently from the model's tokenizer")
        diff = float(np.abs(model.encode(PROBES) - reference).max())
        if diff > TOLERANCE:
            raise Unusable(f"the exported model differs from torch by {diff:.1e} (more than {TOLERANCE:g})")
        os.replace(tmp, onnx_file)
        write_text_atomic(meta_file, json.dumps(meta) + "\n", parents=True)
    except Unusable:
        raise
    except Exception as exc:  # torch.onnx fails in many ways on models it cannot trace
        raise Unusable(f"exporting to ONNX failed ({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})") from None
    finally:
        tmp.unlink(missing_ok=True)
        if eager and auto is not None:
            auto.set_attn_implementation(attention)  # the torch model may still be used to embed
    return load(model_dir, cache_dir, key)
