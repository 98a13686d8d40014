"""Recall from a live Memsense database: its stored chunks and vectors, recall in PostgreSQL,
the query embedded by the model that embedded the data (`core.search` puts the re-rank on top).
"""
from __future__ import annotations

import threading
import time

import numpy as np

from core.config import MAX_ROUTE_DEPTH, Config
from core.errors import MemsenseError
from core.recall.pool import RecallPool
from core.recall.memsense.database import DEFAULT_SCOPE, DEFAULT_TENANT, PostgresStore
from core.recall.embedding.endpoint import DEFAULT_TIMEOUT_S, EndpointEmbedder, FolderEmbedder, is_url
from core.recall.query_text import check_query, js_trim


class PostgresEngine:
    """The same surface as the embedded store's engine (`RecallEngine`): users, chunks, recall."""

    pools_deepen = False
    """PostgreSQL returns ranked lists: pools have the fixed depth they were recalled at."""
    model_path: str | None = None
    """Queries are embedded by the model each user's stored vectors name (`model_text`), not one folder."""

    def __init__(self, dsn: str, *, tenant: str = DEFAULT_TENANT, scope: str = DEFAULT_SCOPE,
                 embedder: str | None = None, embed_timeout: float = DEFAULT_TIMEOUT_S):
        if not embedder:
            raise MemsenseError("a Memsense database needs the query embedded by the model that embedded it: give "
                                "the URL of the embedding endpoint Memsense uses, or a model folder (--embedder, or "
                                "Embedder in the app's Connect dialog)")
        self.store = PostgresStore(dsn, tenant, scope)
        self.location = self.store.location
        self.tenant, self.scope = tenant, scope
        self._embedder_spec, self._timeout = embedder, embed_timeout
        self._embedders: dict[str, EndpointEmbedder | FolderEmbedder] = {}
        self._lock = threading.RLock()
        self.models = self.store.models()
        """(model, dimension, vectors) as stored in the `model` column, most vectors first."""

    @property
    def model_text(self) -> str:
        """The stored model(s), for a status line: `name (384 dims)`."""
        return ", ".join(f"{m} ({d} dims)" for m, d, _ in self.models) or "no stored vectors"

    def users(self) -> list[str]:
        return self.store.users()

    def chunks(self, user_id: str):
        return self.store.chunks(user_id)

    def load_model(self) -> None:
        """Nothing to load ahead: the endpoint or folder is opened for the model a user's data needs."""

    def model_of(self, user_id: str) -> tuple[str, int]:
        """The stored model name and vector dimension of a user's data."""
        s = self.store.check_user(user_id)
        if len(s.models) != 1:
            raise MemsenseError(f"user {user_id!r} has vectors from several models {list(s.models)}; "
                                "Memsense ranks them together, but one query embedding cannot match them all")
        return s.models[0], s.dims[0]

    def _embedder(self, model: str):
        with self._lock:
            if model not in self._embedders:
                spec = self._embedder_spec
                self._embedders[model] = EndpointEmbedder(spec, model, timeout=self._timeout) if is_url(spec) \
                    else FolderEmbedder(spec, model)
            return self._embedders[model]

    def embed_query(self, user_id: str, query: str) -> np.ndarray:
        model, dim = self.model_of(user_id)
        vec = self._embedder(model).embed(query)
        if vec.shape[0] != dim:
            raise MemsenseError(f"the query embedding has {vec.shape[0]} dimensions but {user_id!r}'s stored vectors have "
                                f"{dim} (model {model}); embed queries with {model}")
        return vec

    def recall(self, user_id: str, query: str, depth: int | None = MAX_ROUTE_DEPTH, top_k: int = 4) -> RecallPool:
        """Recall to `depth` (None: `MAX_ROUTE_DEPTH`); `top_k` picks the service pool whose order breaks ties."""
        query = validate_query(query)
        depth = MAX_ROUTE_DEPTH if depth is None else depth
        t0 = time.perf_counter()
        qvec = self.embed_query(user_id, query)
        t1 = time.perf_counter()
        pool = self.store.recall(user_id, query, qvec, depth, top_k)
        pool.timings_ms.update({"embed": (t1 - t0) * 1e3, "database": (time.perf_counter() - t1) * 1e3})
        return pool

    def recall_for(self, user_id: str, query: str, cfg: Config) -> RecallPool:
        """The pool a search under `cfg` re-ranks: deep enough for any config, ties in the
        order Memsense's service gives for `cfg.top_k`."""
        return self.recall(user_id, query, top_k=cfg.top_k)

    def note(self, user_id: str) -> str:
        """Nothing to say about how a user opened: the database serves every user alike."""
        return ""

    def close(self) -> None:
        self.store.close()
        for e in self._embedders.values():
            e.close()


def validate_query(query: str) -> str:
    """The query checked, and trimmed as Memsense trims it before embedding and matching it."""
    return js_trim(check_query(query))
