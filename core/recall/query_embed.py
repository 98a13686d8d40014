"""Query embeddings from the model that embedded a Memsense database (SPEC §10).

Either an HTTP endpoint in one of the two shapes Memsense calls (an OpenAI-style
`.../embeddings` taking `{"model", "input"}`, or an endpoint taking
`{"input", "inputs", "model"}`; both answer `{"data": [{"embedding": [...]}]}`), or a local
sentence-transformers folder. The query is cut to Memsense's 6,000 characters, as it does.
"""
from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from core.errors import MemsenseError

MAX_CHARS = int(os.environ.get("MEMSENSE_EMBEDDING_MAX_CHARS", "6000"))
"""Memsense embeds at most this many characters of a query (its default)."""
DEFAULT_TIMEOUT_S = 30.0


def model_tail(name: str) -> str:
    """`sentence-transformers/all-MiniLM-L6-v2` -> `all-minilm-l6-v2`."""
    return name.rstrip("/").rsplit("/", 1)[-1].lower()


def is_url(location: object) -> bool:
    return str(location).startswith(("http://", "https://"))


class EndpointEmbedder:
    """An embedding endpoint speaking either of Memsense's two request shapes."""

    def __init__(self, url: str, model: str, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT_S):
        self.url, self.model, self.timeout = url, model, timeout
        self.api_key = api_key if api_key is not None else os.environ.get("MEMSENSE_EMBEDDER_KEY")
        self.openai = url.rstrip("/").endswith("/embeddings")
        self.name = model  # what the endpoint was asked for; checked against its answer when it names one

    def close(self) -> None:
        """Nothing held open: each query is one HTTP request."""

    def embed(self, text: str) -> np.ndarray:
        text = text[:MAX_CHARS]
        body = {"model": self.model, "input": text} if self.openai else \
            {"input": text, "model": self.model, "inputs": [text]}
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace").strip()
            raise MemsenseError(f"the embedding endpoint {self.url} answered HTTP {exc.code} ({detail or exc.reason}); "
                                "check the URL and the model name") from None
        except (socket.timeout, TimeoutError):
            raise MemsenseError(f"the embedding endpoint {self.url} did not answer within {self.timeout:g} s; "
                                "check that it is running (or raise --embed-timeout)") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise MemsenseError(f"the embedding endpoint {self.url} did not answer within {self.timeout:g} s; "
                                    "check that it is running (or raise --embed-timeout)") from None
            raise MemsenseError(f"cannot reach the embedding endpoint {self.url} ({reason}); start it or pass "
                                "another --embedder") from None
        try:
            obj = json.loads(raw)
            vec = _embedding_of(obj)
        except (ValueError, TypeError):
            raise MemsenseError(f"the embedding endpoint {self.url} did not answer {{\"data\": [{{\"embedding\": [...]}}]}}; "
                                "is it an embedding endpoint?") from None
        answered = obj.get("model") if isinstance(obj, dict) else None
        if isinstance(answered, str) and answered and model_tail(answered) != model_tail(self.model):
            raise MemsenseError(f"the embedding endpoint {self.url} embeds with {answered}, but the stored vectors "
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
        from core.recall.embed import Embedder

        self.name = model
        self._embedder = Embedder(path, None)

    def embed(self, text: str) -> np.ndarray:
        vec = np.asarray(self._embedder.encode([text[:MAX_CHARS]])[0], dtype=np.float64)
        norm = np.linalg.norm(vec)
        return vec / norm if norm > 0 else vec

    def close(self) -> None:
        self._embedder.close()
