"""A store on a Qdrant server (`--store http(s)://…`), laid out as Qdrant advises for many tenants.

One collection, `memsense_chunks`, holds every user's chunks: one named dense vector per dense
route (§2), the chunk as payload, and two keyword fields: `user_id`, the tenant field, indexed
with `is_tenant=True` (Qdrant then keeps each user's points together), and `generation`. The HNSW
graph is built per tenant (`payload_m`), not over all users (`m=0`); searches are exact scans of
one user's points (SPEC §2), filtered by user and generation.

A second collection, `memsense_meta`, holds the model record (model and dimension) and one record
per user naming the user's current generation. A user is (re-)written crash-safely:
1. every chunk is written under a new generation id (readers still filter on the old one);
2. the user's record is switched to the new generation: one point, one atomic upsert;
3. the user's points of any other generation are deleted.
A crash before 2 leaves the user as it was (its leftovers are deleted by the next write of that
user); a crash after 2 leaves the new data in force and the old points unread. Users are
independent: writers of different users never touch each other's records or points (one writer
per user at a time).

Stores written by earlier memsense keep one collection per user and a meta record mapping users
to collections. They are still read (searches, users, `memsense migrate … --store FOLDER`); writing
to one asks to convert it first, in place, with `memsense migrate URL --store URL` (`upgrade`).
qdrant-client's local mode (`QdrantClient(path=…)`) has the same API and reads the folders of the
memsense that stored everything that way.

Every request to a server ends within a deadline for the whole request, and any failed one is a
MemsenseError naming the server (`core.recall.qdrant.deadline`).
"""
from __future__ import annotations

import math
import uuid
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, TypeGuard

import numpy as np

from core.errors import Cancelled, MemsenseError
from core.recall.qdrant.deadline import DeadlineTransport, guarded, qdrant_timeout
from core.recall.store import Progress, RouteHits, StoreMeta, is_url, model_dim
from core.redact import redact, redact_url
from core.records import DENSE_ROUTES, Chunk

CHUNKS = "memsense_chunks"
META = "memsense_meta"
META_ID = 1
LAYOUT = "one-collection-tenants"
UPSERT_BATCH = 128
SCROLL_PAGE = 1024


def _server(url: str, timeout: float | None = None):
    """A client of the Qdrant server at `url`, checked with one request, each of its requests
    ended within `timeout` seconds (`deadline.qdrant_timeout`) and any failed one a MemsenseError
    (`deadline.guarded`); a malformed address, a server that is down, slow or not Qdrant is one
    MemsenseError."""
    from qdrant_client import QdrantClient

    seconds = qdrant_timeout(timeout)
    fix = "start the server or check the address (http://HOST:PORT, Qdrant's default port is 6333)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # qdrant_client warns before it fails; the error says it all
        try:
            client = guarded(QdrantClient(url=url, timeout=math.ceil(seconds), check_compatibility=False,
                                          transport=DeadlineTransport(url, seconds)), url, seconds)
            client.get_collections()
        except MemsenseError:
            raise
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise MemsenseError(f"cannot reach a Qdrant server at {redact_url(url)} ({redact(reason)}); {fix}") from None
    return client


def _local(path: Path, create: bool):
    from qdrant_client import QdrantClient

    if not create and not (path / "collection").exists() and not (path / "meta.json").exists():
        raise MemsenseError(f"no memory store at {path}; build one with `memsense ingest DATASET --store {path}`")
    path.mkdir(parents=True, exist_ok=True)
    try:
        return QdrantClient(path=str(path))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise MemsenseError(f"the store {path} is open in another process; close the other "
                                "memsense or memsense-gui using it (or work on a copy of the folder)") from None
        raise MemsenseError(f"cannot open the store {path}: {exc}") from None
    except Exception as exc:
        raise MemsenseError(f"the store {path} is damaged or not a Qdrant store ({exc}); "
                            "rebuild it with memsense ingest") from None


def user_record_id(user_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "memsense-user:" + user_id))


def chunk_point_id(user_id: str, generation: str, memory_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"memsense:{user_id}:{generation}:{memory_id}"))


def _match(key: str, value: str):
    from qdrant_client import models

    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


class QdrantStore:
    """Every user's chunks and route vectors in one Qdrant collection, a tenant per user."""

    scanner = None
    """The server returns ranked lists, not every vector: recall pools have a fixed depth."""

    def __init__(self, location: str | Path, create: bool = False, client: Any = None, timeout: float | None = None):
        self.location = str(location)
        self.local = not is_url(location)
        if client is not None:
            self.client = client
        else:
            self.client = _local(Path(location).expanduser(), create) if self.local else \
                _server(self.location, timeout)
        self._rows_of: dict[tuple[str, str], dict[str, int]] = {}

    # -- meta ------------------------------------------------------------------------------
    def _record(self) -> dict | None:
        """The model record (META_ID): {layout, model_key, dim}; in an older store {model_key, dim, users}."""
        if not self.client.collection_exists(META):
            return None
        pts = self.client.retrieve(META, [META_ID], with_payload=True)
        return (pts[0].payload or {}) if pts else None

    @staticmethod
    def _is_legacy(record: dict | None) -> TypeGuard[dict]:
        return record is not None and "layout" not in record and "users" in record

    @property
    def legacy(self) -> bool:
        """Written by an earlier memsense: one collection per user."""
        return self._is_legacy(self._record())

    def _dim(self) -> int:
        return model_dim(self.meta(), self.location)

    def meta(self) -> StoreMeta | None:
        record = self._record()
        if record is None:
            return None
        users = dict(record.get("users", {})) if self._is_legacy(record) else self._generations()
        return StoreMeta(record.get("model_key", ""), int(record.get("dim", 0)), users)

    def _generations(self) -> dict[str, str]:
        """user_id -> current generation, from the user records (a few requests for 1,000 users)."""
        out, offset = {}, None
        while True:  # the collection holds the model record and the user records only: no filter needed
            pts, offset = self.client.scroll(META, limit=SCROLL_PAGE, offset=offset, with_payload=True)
            out.update({p.payload["user_id"]: p.payload["generation"] for p in pts if (p.payload or {}).get("kind") == "user"})
            if offset is None:
                return out

    def users(self) -> list[str]:
        meta = self.meta()
        return sorted(meta.users) if meta else []

    def _where(self, user_id: str) -> tuple[str, str | None]:
        """(collection, generation) holding a user's chunks; generation None in an older store.
        One request: the model record and the user's record are read together."""
        if self.client.collection_exists(META):
            pts = {p.id: p.payload or {} for p in self.client.retrieve(META, [META_ID, user_record_id(user_id)],
                                                                         with_payload=True)}
            record, mine = pts.get(META_ID), pts.get(user_record_id(user_id))
            if self._is_legacy(record):
                if user_id in record.get("users", {}):
                    return record["users"][user_id], None
            elif record is not None and mine is not None:
                return CHUNKS, mine["generation"]
        known = self.users()
        shown = ", ".join(known[:20]) + (f" … ({len(known)} in all)" if len(known) > 20 else "")
        raise MemsenseError(f"unknown user {user_id!r}; users in this store: {shown or 'none'}")

    @staticmethod
    def _filter(**fields: str):
        from qdrant_client import models

        return models.Filter(must=[_match(k, v) for k, v in fields.items()])

    # -- reading -------------------------------------------------------------------------------
    def _points(self, user_id: str, vectors: bool | list[str]) -> tuple[list, str | None]:
        name, generation = self._where(user_id)
        flt = None if generation is None else self._filter(user_id=user_id, generation=generation)
        points, offset = [], None
        while True:
            batch, offset = self.client.scroll(name, scroll_filter=flt, limit=SCROLL_PAGE, offset=offset,
                                               with_payload=True, with_vectors=vectors)
            points.extend(batch)
            if offset is None:
                break
        points.sort(key=lambda p: p.payload["memory_id"])
        return points, generation

    def read_user(self, user_id: str) -> tuple[list[Chunk], np.ndarray]:
        """All chunks of a user, sorted by memory_id, with their vec_full vectors (zeros if none)."""
        chunks, vectors = self.read_user_routes(user_id, ["vec_full"])
        return chunks, vectors["vec_full"].astype(np.float64)

    def read_user_routes(self, user_id: str, routes: Iterable[str] = DENSE_ROUTES) -> tuple[list[Chunk], dict[str, np.ndarray]]:
        """All chunks of a user sorted by memory_id, with the routes' vectors (zero rows where none)."""
        routes = list(routes)
        points, _ = self._points(user_id, routes)
        dim = self._dim()
        vectors = {r: np.zeros((len(points), dim), dtype=np.float32) for r in routes}
        for i, p in enumerate(points):
            for r, v in (p.vector or {}).items() if isinstance(p.vector, dict) else ():
                if r in vectors:
                    vectors[r][i] = v
        return [Chunk.from_payload(p.payload) for p in points], vectors

    def search(self, user_id: str, query: np.ndarray, routes: Iterable[str], limit: int) -> dict[str, RouteHits]:
        """Each dense route's hits as rows of `read_user`'s order, best first, ties by memory_id."""
        from qdrant_client import models

        name, generation = self._where(user_id)
        flt = None if generation is None else self._filter(user_id=user_id, generation=generation)
        exact = None if self.local else models.SearchParams(exact=True)  # local mode is always exact (and says so)
        routes = list(routes)
        requests = [models.QueryRequest(query=query.tolist(), using=r, limit=limit, filter=flt, params=exact,
                                        with_payload=["memory_id"]) for r in routes]
        responses = self.client.query_batch_points(name, requests)
        row_of = self._rows(user_id, generation or name)
        out = {}
        for r, resp in zip(routes, responses):
            hits = sorted(((float(p.score), row_of[p.payload["memory_id"]]) for p in resp.points),
                          key=lambda h: (-h[0], h[1]))
            out[r] = RouteHits(np.array([h[1] for h in hits], dtype=np.int64),
                               np.array([h[0] for h in hits], dtype=np.float64))
        return out

    def _rows(self, user_id: str, generation: str) -> dict[str, int]:
        key = (user_id, generation)
        if key not in self._rows_of:
            self._rows_of = {k: v for k, v in self._rows_of.items() if k[0] != user_id}
            self._rows_of[key] = {c.memory_id: i for i, c in enumerate(self.read_user(user_id)[0])}
        return self._rows_of[key]

    # -- writing -------------------------------------------------------------------------------
    def _refuse_legacy(self, record: dict | None, doing: str) -> None:
        if self._is_legacy(record):
            raise MemsenseError(f"the store {redact_url(self.location)} keeps one collection per user (written by an older "
                                f"memsense); to {doing}, convert it once, in place: "
                                f"`memsense migrate {redact_url(self.location)} --store {redact_url(self.location)}`")

    def _ensure_layout(self, dim: int) -> None:
        """The chunks collection (tenant index on user_id, HNSW per tenant) and the meta collection."""
        from qdrant_client import models

        if not self.client.collection_exists(CHUNKS):
            self.client.create_collection(
                CHUNKS, vectors_config={r: models.VectorParams(size=dim, distance=models.Distance.COSINE)
                                        for r in DENSE_ROUTES},
                hnsw_config=models.HnswConfigDiff(payload_m=16, m=0))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # local mode: "payload indexes have no effect"
                self.client.create_payload_index(CHUNKS, "user_id", field_schema=models.KeywordIndexParams(
                    type=models.KeywordIndexType.KEYWORD, is_tenant=True))
                self.client.create_payload_index(CHUNKS, "generation", field_schema=models.KeywordIndexParams(
                    type=models.KeywordIndexType.KEYWORD))
        if not self.client.collection_exists(META):
            self.client.create_collection(META, vectors_config={})

    def _set_model(self, model_key: str, dim: int) -> None:
        from qdrant_client import models

        self.client.upsert(META, [models.PointStruct(id=META_ID, vector={}, payload={
            "layout": LAYOUT, "model_key": model_key, "dim": dim})], wait=True)

    def write_user(self, user_id: str, chunks: list[Chunk], vectors: dict[str, np.ndarray], model_key: str, dim: int,
                   progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> None:
        """Write the user's chunks under a new generation, switch its record to it, then delete
        its older points (see the module's notes: a crash at any step loses nothing stored).

        `vectors[route]` holds one row per chunk; an all-zero row means "no text for that route".
        """
        record = self._record()
        self._refuse_legacy(record, "ingest into it")
        foreign = next((c for c in chunks if c.user_id != user_id), None)
        if foreign is not None:
            raise MemsenseError(f"chunk {foreign.memory_id!r} belongs to user {foreign.user_id!r}, not {user_id!r}; "
                                "nothing was written")
        if not all(np.isfinite(vectors[r]).all() and np.shape(vectors[r]) == (len(chunks), dim) for r in DENSE_ROUTES):
            raise MemsenseError(f"the vectors of user {user_id!r} are not finite {dim}-dimensional rows; nothing was written")
        meta = self.meta()
        if meta is not None and meta.users and meta.dim != dim:  # the model is checked by engine.check_model
            raise MemsenseError(f"this store was built with model {meta.model_key} (dim {meta.dim}); "
                                f"ingest with the same --model or into a new store")
        self._ensure_layout(dim)
        if meta is None or not meta.users:
            self._set_model(model_key, dim)
        generation = uuid.uuid4().hex
        try:
            self._write_points(user_id, generation, chunks, vectors, progress, cancelled)
        except BaseException:
            self._delete_points(user_id, keep=None, only=generation)
            raise
        self._switch(user_id, generation, len(chunks))
        self._set_model(model_key, dim)
        self._delete_points(user_id, keep=generation)

    def _write_points(self, user_id: str, generation: str, chunks: list[Chunk], vectors: dict[str, np.ndarray],
                      progress: Progress | None, cancelled: Callable[[], bool] | None) -> None:
        from qdrant_client import models

        for start in range(0, len(chunks), UPSERT_BATCH):
            if cancelled and cancelled():
                raise Cancelled("cancelled")
            points = []
            for i in range(start, min(start + UPSERT_BATCH, len(chunks))):
                vec = {r: np.asarray(vectors[r][i], dtype=np.float64).tolist() for r in DENSE_ROUTES if vectors[r][i].any()}
                payload = {**chunks[i].to_payload(), "user_id": user_id, "generation": generation}
                points.append(models.PointStruct(id=chunk_point_id(user_id, generation, chunks[i].memory_id),
                                                 vector=vec, payload=payload))
            self.client.upsert(CHUNKS, points, wait=True)
            if progress:
                progress(min(start + UPSERT_BATCH, len(chunks)), len(chunks))

    def _switch(self, user_id: str, generation: str, n: int) -> None:
        """The commit of a write: the user's record names the new generation (one atomic upsert)."""
        from qdrant_client import models

        self.client.upsert(META, [models.PointStruct(id=user_record_id(user_id), vector={}, payload={
            "kind": "user", "user_id": user_id, "generation": generation, "chunks": n})], wait=True)
        self._rows_of = {k: v for k, v in self._rows_of.items() if k[0] != user_id}

    def _delete_points(self, user_id: str, keep: str | None, only: str | None = None) -> None:
        """Delete a user's points of every generation but `keep` (or of generation `only`)."""
        from qdrant_client import models

        must = [_match("user_id", user_id)] + ([_match("generation", only)] if only else [])
        must_not = [_match("generation", keep)] if keep else []
        self.client.delete(CHUNKS, points_selector=models.FilterSelector(
            filter=models.Filter(must=must, must_not=must_not)), wait=True)

    def drop_user(self, user_id: str) -> None:
        """Remove the user's record (the commit), then its points."""
        record = self._record()
        self._refuse_legacy(record, "drop a user")
        self._where(user_id)  # unknown user: the error lists the known ones
        self.client.delete(META, points_selector=[user_record_id(user_id)], wait=True)
        self._rows_of = {k: v for k, v in self._rows_of.items() if k[0] != user_id}
        self._delete_points(user_id, keep=None)

    # -- conversion of an older store -------------------------------------------------------------
    def upgrade(self, progress: Callable[[int, int, str], None] | None = None) -> dict:
        """Convert a store of one collection per user into this layout, in place and crash-safely:
        every user is copied under a new generation with its record, then the model record is
        switched to this layout (the commit: until then the store reads as it was), then the old
        collections are deleted. Returns counts."""
        record = self._record()
        if not self._is_legacy(record):
            raise MemsenseError(f"the store {redact_url(self.location)} already keeps all users in one collection; nothing to convert")
        model_key, dim, old = record.get("model_key", ""), int(record.get("dim", 0)), dict(record.get("users", {}))
        self._ensure_layout(dim)
        generations, chunks = {}, 0
        for n, user in enumerate(sorted(old)):
            if progress:
                progress(n, len(old), f"copying {user}")
            rows, vectors = self.read_user_routes(user)
            generations[user] = uuid.uuid4().hex
            self._write_points(user, generations[user], rows, vectors, None, None)
            self._switch(user, generations[user], len(rows))
            chunks += len(rows)
        self._set_model(model_key, dim)  # the commit: from here the store is read in this layout
        for user, generation in generations.items():
            self._delete_points(user, keep=generation)  # leftovers of an earlier, interrupted conversion
        for name in set(old.values()):
            if self.client.collection_exists(name):
                self.client.delete_collection(name)
        if progress:
            progress(len(old), len(old), "done")
        return {"users": len(old), "chunks": chunks, "model_key": model_key, "store": self.location}

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass
