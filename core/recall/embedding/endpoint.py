"""Query embeddings from the model that embedded a Memsense database (SPEC §10).

Either an HTTP endpoint in one of the two shapes Memsense calls (an OpenAI-style
`.../embeddings` taking `{"model", "input"}`, or an endpoint taking
`{"input", "inputs", "model"}`; both answer `{"data": [{"embedding": [...]}]}`), or a local
sentence-transformers folder. The query is cut as Memsense cuts it (`core.recall.query_text`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from core.errors import MemsenseError
from core.recall.http_post import HttpFailure, failure_error, post_json
from core.recall.timeouts import EMBED_TIMEOUT_S, check_timeout
from core.recall.query_text import for_local_model, memsense_cut
from core.redact import redact_url

DEFAULT_TIMEOUT_S = EMBED_TIMEOUT_S


def model_tail(name: str) -> str:
    """`sentence-transformers/all-MiniLM-L6-v2` -> `all-minilm-l6-v2`."""
    return name.rstrip("/").rsplit("/", 1)[-1].lower()


def is_url(location: object) -> bool:
    return str(location).startswith(("http://", "https://"))


class EndpointEmbedder:
    """An embedding endpoint speaking either of Memsense's two request shapes."""

    def __init__(self, url: str, model: str, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT_S):
        self.url, self.model = url, model
        self.timeout = check_timeout(timeout, "--embed-timeout")
        self.api_key = api_key if api_key is not None else os.environ.get("MEMSENSE_EMBEDDER_KEY")
        self.openai = url.rstrip("/").endswith("/embeddings")
        self.name = model  # what the endpoint was asked for; checked against its answer when it names one

    def close(self) -> None:
        """Nothing held open: each query is one HTTP request."""

    def embed(self, text: str) -> np.ndarray:
        text = memsense_cut(text)
        body = {"model": self.model, "input": text} if self.openai else \
            {"input": text, "model": self.model, "inputs": [text]}
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        where = f"the embedding endpoint {redact_url(self.url)}"
        try:
            raw = post_json(self.url, body, timeout=self.timeout, headers=headers)
        except HttpFailure as exc:
            raise failure_error(exc, where, self.timeout, longer="--embed-timeout",
                                status_fix="check the URL and the model name", is_it="is it an embedding endpoint?",
                                reach_fix="start it or pass another --embedder") from None
        try:
            obj = json.loads(raw)
            vec = _embedding_of(obj)
        except (ValueError, TypeError):
            raise MemsenseError(f"{where} did not answer {{\"data\": [{{\"embedding\": [...]}}]}}; "
                                "is it an embedding endpoint?") from None
        answered = obj.get("model") if isinstance(obj, dict) else None
        if isinstance(answered, str) and answered and model_tail(answered) != model_tail(self.model):
            raise MemsenseError(f"{where} embeds with {answered}, but the stored vectors "
                                f"were made by {self.model}; use an endpoint serving {self.model}")
        if not vec.any():  # matches nothing: every dense route would score 0
            raise MemsenseError(f"the embedding endpoint {self.url} answered an all-zero vector, which would make every "
                                "dense route score 0; check that it serves the embedding model (or pass another --embedder)")
        return vec


def _embedding_of(obj) -> np.ndarray:
    data = obj.get("data") if isinstance(obj, dict) else None
    vec = data[0].get("embedding") if isinstance(data, list) and data and isinstance(data[0], dict) else None
    if vec is None and isinstance(obj, dict):
        vec = obj.get("embedding")
    if not isinstance(vec, list) or not vec:
        raise ValueError("no embedding")
    out = np.array(vec, dtype=np.float64)
    if out.ndim != 1 or not np.all(np.isfinite(out)):
        raise ValueError("not a vector")
    return out


class FolderEmbedder:
    """A local sentence-transformers folder; its name or README must name the stored model."""

    def __init__(self, folder: str | Path, model: str):
        path = Path(folder).expanduser()
        tail = model_tail(model)
        readme = path / "README.md"
        text = str(path).lower() + (readme.read_text("utf-8", "replace").lower() if readme.is_file() else "")
        if not path.is_dir():
            raise MemsenseError(f"{path} is not a folder; --embedder takes an endpoint URL or a local "
                                "sentence-transformers model folder")
        if tail not in text:
            raise MemsenseError(f"the stored vectors were made by {model}, and the folder {path} is not that model "
                                f"(neither its path nor its README names {tail}); give that model's folder or its endpoint")
        from core.recall.embedding.embedder import Embedder

        self.name = model
        self._embedder = Embedder(path, None)

    def embed(self, text: str) -> np.ndarray:
        vec = np.asarray(self._embedder.encode([for_local_model(text)])[0], dtype=np.float64)
        norm = np.linalg.norm(vec)
        return vec / norm if norm > 0 else vec

    def close(self) -> None:
        self._embedder.close()
