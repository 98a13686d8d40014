"""The memory store: Qdrant in local mode on disk (a directory), or a Qdrant server by URL.

One collection per user (conversation), one named dense vector per dense route (§2) and the
chunk as payload; a meta collection maps users to collections and records the model. A
re-ingested user is written to a fresh collection and swapped in only when complete, so a
crash or cancel never loses what was stored.
"""
from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, NamedTuple, Protocol

import numpy as np

from core.errors import Cancelled, MemsenseError
from core.records import DENSE_ROUTES, Chunk

META = "memsense_meta"
META_ID = 1
UPSERT_BATCH = 128


def point_id(memory_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "memsense:" + memory_id))


def is_url(location: str | Path) -> bool:
    return str(location).startswith(("http://", "https://"))


def _server(url: str):
    """A client of the Qdrant server at `url`, checked with one request; a malformed address,
    a server that is down or not Qdrant is one MemsenseError."""
    import warnings

    from qdrant_client import QdrantClient

    fix = "start the server or check the address (http://HOST:PORT, Qdrant's default port is 6333)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # qdrant_client warns before it fails; the error says it all
        try:
            client = QdrantClient(url=url, timeout=10)
            client.get_collections()
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise MemsenseError(f"cannot reach a Qdrant server at {url} ({reason}); {fix}") from None
    return client


@dataclass(frozen=True)
class StoreMeta:
    model_key: str
    dim: int
    users: dict[str, str]  # user_id -> where its data lives (a collection, a file...)


class RouteHits(NamedTuple):
    """One route's list for a query: best first, ties by row (= by memory_id)."""

    rows: np.ndarray  # int64 indexes into the user's chunks in `read_user` order (sorted by memory_id)
    scores: np.ndarray  # float64 raw scores (cosine), same order


Progress = Callable[[int, int], None]


def top_rows(scores: np.ndarray, limit: int) -> np.ndarray:
    """Rows of the `limit` highest finite scores, best first, ties by row (exact, like a full sort)."""
    finite = np.flatnonzero(np.isfinite(scores))
    if len(finite) > limit:
        part = scores[finite]
        kth = np.partition(part, len(part) - limit)[len(part) - limit]
        above = finite[part > kth]
        at = finite[part == kth][: limit - len(above)]
        finite = np.concatenate([above, at])
    return finite[np.lexsort((finite, -scores[finite]))]


class Store(Protocol):
    """What the engine needs from a memory store; every backend (embedded, Qdrant server,
    PostgreSQL) implements it. Errors a user can cause raise `MemsenseError` naming the user
    and the fix; a user whose data is missing or damaged is an error, never an empty result."""

    location: str

    def meta(self) -> StoreMeta | None:
        """The model that built the store and the users in it; None for a store with nothing in it."""

    def users(self) -> list[str]:
        """Every user id, sorted."""

    def read_user(self, user_id: str) -> tuple[list[Chunk], np.ndarray]:
        """All chunks of a user sorted by memory_id, and their vec_full vectors (zero rows where none)."""

    def search(self, user_id: str, query: np.ndarray, routes: Iterable[str], limit: int) -> dict[str, RouteHits]:
        """Each dense route's best `limit` chunks by cosine to `query` (exact), with raw scores."""

    def write_user(self, user_id: str, chunks: list[Chunk], vectors: dict[str, np.ndarray], model_key: str, dim: int,
                   progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> None:
        """Replace one user's chunks (one row of `vectors[route]` per chunk; zero rows = no text),
        all or nothing: a crash or cancel leaves the user as it was."""

    def drop_user(self, user_id: str) -> None:
        """Remove one user and its data."""

    def close(self) -> None:
        """Release the store (locks, files, connections)."""


class QdrantStore:
    """Chunks and their route vectors, per user."""

    def __init__(self, location: str | Path, create: bool = False):
        from qdrant_client import QdrantClient

        self.location = str(location)
        self._row_index: dict[str, dict[str, int]] = {}
        if is_url(location):
            self.client = _server(self.location)
        else:
            path = Path(location).expanduser()
            if not create and not (path / "collection").exists() and not (path / "meta.json").exists():
                raise MemsenseError(f"no memory store at {path}; build one with "
                                    f"`memsense ingest DATASET --store {path}`")
            path.mkdir(parents=True, exist_ok=True)
            try:
                self.client = QdrantClient(path=str(path))
            except RuntimeError as exc:
                if "already accessed" in str(exc):
                    raise MemsenseError(f"the store {path} is open in another process; close the other "
                                        "memsense or memsense-gui using it (or work on a copy of the folder)") from None
                raise MemsenseError(f"cannot open the store {path}: {exc}") from None
            except Exception as exc:
                raise MemsenseError(f"the store {path} is damaged or not a Qdrant store ({exc}); "
                                    "rebuild it with memsense ingest") from None

    # -- meta ------------------------------------------------------------------------------
    def meta(self) -> StoreMeta | None:
        if not self.client.collection_exists(META):
            return None
        pts = self.client.retrieve(META, [META_ID], with_payload=True)
        if not pts:
            return None
        p = pts[0].payload or {}
        return StoreMeta(p.get("model_key", ""), int(p.get("dim", 0)), dict(p.get("users", {})))

    def _write_meta(self, meta: StoreMeta) -> None:
        from qdrant_client import models

        if not self.client.collection_exists(META):
            self.client.create_collection(META, vectors_config={})
        self.client.upsert(META, [models.PointStruct(id=META_ID, vector={}, payload={
            "model_key": meta.model_key, "dim": meta.dim, "users": meta.users})])

    def users(self) -> list[str]:
        meta = self.meta()
        return sorted(meta.users) if meta else []

    def collection(self, user_id: str) -> str:
        meta = self.meta()
        if meta is None or user_id not in meta.users:
            known = ", ".join(self.users()) or "none"
            raise MemsenseError(f"unknown user {user_id!r}; users in this store: {known}")
        return meta.users[user_id]

    # -- writing -------------------------------------------------------------------------------
    def write_user(self, user_id: str, chunks: list[Chunk], vectors: dict[str, np.ndarray], model_key: str, dim: int,
                   progress: Callable[[int, int], None] | None = None,
                   cancelled: Callable[[], bool] | None = None) -> None:
        """Store one user's chunks in a fresh collection, then swap it in (crash-safe).

        `vectors[route]` holds one row per chunk; an all-zero row means "no text for that route".
        """
        from qdrant_client import models

        meta = self.meta() or StoreMeta(model_key, dim, {})
        if meta.users and meta.dim != dim:  # the model itself is checked by core.recall.engine.check_model
            raise MemsenseError(f"this store was built with model {meta.model_key} (dim {meta.dim}); "
                                f"ingest with the same --model or into a new store")
        slug = re.sub(r"[^a-zA-Z0-9_-]", "_", user_id)[:40]
        name = f"chunks_{slug}_{hashlib.sha1(user_id.encode()).hexdigest()[:6]}_{uuid.uuid4().hex[:6]}"
        self.client.create_collection(name, vectors_config={
            r: models.VectorParams(size=dim, distance=models.Distance.COSINE) for r in DENSE_ROUTES})
        try:
            for start in range(0, len(chunks), UPSERT_BATCH):
                if cancelled and cancelled():
                    raise Cancelled("cancelled")
                points = []
                for i in range(start, min(start + UPSERT_BATCH, len(chunks))):
                    vec = {r: vectors[r][i].tolist() for r in DENSE_ROUTES if vectors[r][i].any()}
                    points.append(models.PointStruct(id=point_id(chunks[i].memory_id), vector=vec,
                                                     payload=chunks[i].to_payload()))
                self.client.upsert(name, points)
                if progress:
                    progress(min(start + UPSERT_BATCH, len(chunks)), len(chunks))
        except BaseException:
            self.client.delete_collection(name)
            raise
        users = {**meta.users, user_id: name}
        self._row_index.pop(user_id, None)
        self._write_meta(StoreMeta(model_key, dim, users))
        self._drop_unreferenced(set(users.values()))

    def _drop_unreferenced(self, keep: set[str]) -> None:
        """Delete chunk collections no user points to: replaced ones, or leftovers of a crash."""
        for c in self.client.get_collections().collections:
            if c.name.startswith("chunks_") and c.name not in keep:
                self.client.delete_collection(c.name)

    # -- reading -------------------------------------------------------------------------------
    def read_user(self, user_id: str) -> tuple[list[Chunk], np.ndarray]:
        """All chunks of a user, sorted by memory_id, with their vec_full vectors (zeros if none)."""
        name = self.collection(user_id)
        chunks, vecs, offset = [], [], None
        while True:
            pts, offset = self.client.scroll(name, limit=512, offset=offset, with_payload=True, with_vectors=["vec_full"])
            for p in pts:
                chunks.append(Chunk.from_payload(p.payload))
                v = (p.vector or {}).get("vec_full") if isinstance(p.vector, dict) else None
                vecs.append(v)
            if offset is None:
                break
        order = sorted(range(len(chunks)), key=lambda i: chunks[i].memory_id)
        dim = self.meta().dim
        matrix = np.zeros((len(chunks), dim))
        for row, i in enumerate(order):
            if vecs[i] is not None:
                matrix[row] = vecs[i]
        return [chunks[i] for i in order], matrix

    def read_user_routes(self, user_id: str) -> tuple[list[Chunk], dict[str, np.ndarray]]:
        """All chunks of a user sorted by memory_id, with every dense route's vectors (zero rows where none)."""
        name = self.collection(user_id)
        points, offset = [], None
        while True:
            batch, offset = self.client.scroll(name, limit=512, offset=offset, with_payload=True, with_vectors=True)
            points.extend(batch)
            if offset is None:
                break
        points.sort(key=lambda p: p.payload["memory_id"])
        dim = self.meta().dim
        vectors = {r: np.zeros((len(points), dim), dtype=np.float32) for r in DENSE_ROUTES}
        for i, p in enumerate(points):
            for r, v in (p.vector or {}).items():
                if r in vectors:
                    vectors[r][i] = v
        return [Chunk.from_payload(p.payload) for p in points], vectors

    def search(self, user_id: str, query: np.ndarray, routes: Iterable[str], limit: int) -> dict[str, RouteHits]:
        """Each dense route's hits as rows of `read_user`'s order, best first, ties by memory_id."""
        from qdrant_client import models

        name = self.collection(user_id)
        routes = list(routes)
        requests = [models.QueryRequest(query=query.tolist(), using=r, limit=limit, with_payload=["memory_id"])
                    for r in routes]
        responses = self.client.query_batch_points(name, requests)
        row_of = self._rows(user_id)
        out = {}
        for r, resp in zip(routes, responses):
            hits = sorted(((float(p.score), row_of[p.payload["memory_id"]]) for p in resp.points),
                          key=lambda h: (-h[0], h[1]))
            out[r] = RouteHits(np.array([h[1] for h in hits], dtype=np.int64),
                               np.array([h[0] for h in hits], dtype=np.float64))
        return out

    def _rows(self, user_id: str) -> dict[str, int]:
        if user_id not in self._row_index:
            self._row_index[user_id] = {c.memory_id: i for i, c in enumerate(self.read_user(user_id)[0])}
        return self._row_index[user_id]

    def drop_user(self, user_id: str) -> None:
        meta = self.meta()
        name = self.collection(user_id)
        users = {u: c for u, c in meta.users.items() if u != user_id}
        self._write_meta(StoreMeta(meta.model_key, meta.dim, users))
        self.client.delete_collection(name)
        self._row_index.pop(user_id, None)

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass
