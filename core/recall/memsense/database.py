"""A live Memsense database (PostgreSQL + pgvector, SPEC §10) opened as a read-only store.

Recall runs in the database the way Memsense's phase 1 does: the same scoped rows
(`tenant_id`, `scope`, `user_id`, `status = 'active'`), each dense route ordered by pgvector
cosine with `ROW_NUMBER`, the lexical route by `ts_rank_cd` over
`websearch_to_tsquery('english')`; but every route's list is kept as deep as live tuning needs
and comes back with its raw scores, so fusion, turn support and MMR run in `core` unchanged.

The SQL is in `core.recall.memsense.sql`; the read-only session and the checks that the database is
a Memsense one with the tenant's scope are in `core.recall.memsense.session`. Nothing is ever written.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

import numpy as np

from core.errors import MemsenseError
from core.recall.memsense.session import ReadOnlySession, check_schema, check_scope
from core.recall.memsense.sql import CHUNK_COLUMNS, ROUTE_COLUMNS, query_literal, recall_sql, service_pool_sql
from core.recall.pool import RecallPool, neighbors_of, unit_rows
from core.records import DEFAULT_MEMORY_SCORE, ROUTES, Chunk

SESSION_SOURCE = "eval_ingest_session"
TURN_SOURCE = "eval_ingest_turn"
DEFAULT_TENANT = "default"
DEFAULT_SCOPE = "user"

_SESSION_NUMBER = re.compile(r"session[_-]?(\d+)$")


@dataclass(frozen=True)
class UserSummary:
    user_id: str
    chunks: int
    active: int
    vectors: int
    models: tuple[str, ...]
    dims: tuple[int, ...]


def _text(v: Any) -> str:
    return "" if v is None else str(v)


def _split_content(content: str) -> tuple[str, str]:
    """`content` is the canonical QA JSON (§1); anything else is all user text."""
    try:
        obj = json.loads(content)
    except (TypeError, ValueError):
        return content, ""
    if isinstance(obj, dict) and ("user" in obj or "assistant" in obj):
        return _text(obj.get("user")), _text(obj.get("assistant"))
    return content, ""


def _iso(ms: Any) -> str:
    try:
        return datetime.fromtimestamp(int(ms) / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    except (TypeError, ValueError, OverflowError, OSError):
        return ""


def chunk_from_row(row: dict, order: int) -> Chunk:
    """A `memory_chunks` row as a Chunk. Session chunks are Memsense's session-first rows;
    every other source is ranked like a turn (it never becomes a session row, as in Memsense)."""
    user_text, assistant_text = _split_content(_text(row["content"]))
    session_id = _text(row["session_id"])
    m = _SESSION_NUMBER.search(session_id)
    tags = row["tags"] if isinstance(row["tags"], list) else []
    score = row["score"]
    return Chunk(
        memory_id=row["memory_id"], user_id=_text(row["user_id"]), session_id=session_id,
        session_number=int(m.group(1)) if m else 0,
        kind="session" if row["source"] == SESSION_SOURCE else "turn", order=order,
        time=_iso(row["timestamp_ms"]), user_text=user_text, assistant_text=assistant_text,
        next_user_text=_text(row["next_user_text"]), tags=tuple(str(t) for t in tags),
        task_tag=_text(row["task_tag"]), memory_kind=_text(row["memory_kind"]) or "episodic",
        personal_info=_text(row["facet_personal_info"]), preferences=_text(row["facet_preferences"]),
        events=_text(row["facet_events"]),
        memory_score=float(score) if score is not None else DEFAULT_MEMORY_SCORE,
    )


class PostgresStore:
    """One Memsense database, one tenant and scope, read-only."""

    def __init__(self, dsn: str, tenant: str = DEFAULT_TENANT, scope: str = DEFAULT_SCOPE):
        self.dsn, self.tenant, self.scope = dsn, tenant, scope
        self.db = ReadOnlySession(dsn)
        self.location = self.db.location
        self._lock = threading.RLock()  # the per-user chunk cache
        self._chunks: dict[str, tuple[list[Chunk], dict[str, int]]] = {}
        self._keys: dict[str, tuple[int, int]] = {}  # memory_id -> (timestamp_ms, id)
        try:
            check_schema(self.db)
            check_scope(self.db, tenant, scope)
        except MemsenseError:
            self.db.close()
            raise

    @property
    def conn(self):
        """The psycopg connection (a new one after the server dropped the last)."""
        return self.db.conn


    # -- what is stored ----------------------------------------------------------------------
    def users(self) -> list[str]:
        rows = self.db.rows("SELECT DISTINCT user_id FROM memory_chunks WHERE tenant_id = %(tenant)s "
                          "AND scope = %(scope)s AND status = 'active' AND user_id IS NOT NULL ORDER BY user_id",
                          {"tenant": self.tenant, "scope": self.scope})
        return [r["user_id"] for r in rows]

    def models(self) -> list[tuple[str, int, int]]:
        """(model, dimension, vectors) stored for the tenant and scope: the `model` column."""
        rows = self.db.rows("SELECT e.model, vector_dims(e.embedding) AS dim, count(*) AS n FROM memory_chunks c "
                          "JOIN memory_chunk_embeddings e ON e.chunk_id = c.id WHERE c.tenant_id = %(tenant)s "
                          "AND c.scope = %(scope)s AND c.status = 'active' GROUP BY 1, 2 ORDER BY n DESC",
                          {"tenant": self.tenant, "scope": self.scope})
        return [(r["model"], int(r["dim"]), int(r["n"])) for r in rows]

    def summary(self, user_id: str) -> UserSummary:
        row = self.db.rows(
            "SELECT count(*) AS chunks, count(*) FILTER (WHERE c.status = 'active') AS active, "
            "count(e.chunk_id) FILTER (WHERE c.status = 'active') AS vectors, "
            "coalesce(array_agg(DISTINCT e.model) FILTER (WHERE e.model IS NOT NULL), '{}') AS models, "
            "coalesce(array_agg(DISTINCT vector_dims(e.embedding)) FILTER (WHERE e.embedding IS NOT NULL), '{}') AS dims "
            "FROM memory_chunks c LEFT JOIN memory_chunk_embeddings e ON e.chunk_id = c.id "
            "WHERE c.tenant_id = %(tenant)s AND c.scope = %(scope)s AND c.user_id = %(user)s",
            {"tenant": self.tenant, "scope": self.scope, "user": user_id})[0]
        return UserSummary(user_id, row["chunks"], row["active"], row["vectors"], tuple(row["models"]),
                           tuple(row["dims"]))

    def check_user(self, user_id: str) -> UserSummary:
        """The user's summary, or one clear error when it cannot be searched."""
        s = self.summary(user_id)
        where = f"tenant {self.tenant!r}, scope {self.scope!r}"
        if s.chunks == 0:
            users = self.users()
            shown = ", ".join(users[:20]) + (f" … ({len(users)} in all)" if len(users) > 20 else "")
            raise MemsenseError(f"unknown user {user_id!r} in {where}; users there: {shown or 'none'}")
        if s.active == 0:
            raise MemsenseError(f"user {user_id!r} has {s.chunks} chunks in {where} but none is active "
                                "(status = 'active'): Memsense would find nothing; pick another user")
        if s.vectors == 0:
            raise MemsenseError(f"user {user_id!r} has {s.active} active chunks but no stored vectors: the Memsense "
                                "embedding worker has not embedded them yet (or failed); wait for it, then retry")
        if len(s.dims) > 1:
            raise MemsenseError(f"user {user_id!r} has vectors of several dimensions {list(s.dims)} "
                                f"(models {list(s.models)}); Memsense only compares vectors of the query's dimension")
        return s

    def chunks(self, user_id: str) -> list[Chunk]:
        return self._user_chunks(user_id)[0]

    def _user_chunks(self, user_id: str) -> tuple[list[Chunk], dict[str, int]]:
        with self._lock:
            if user_id not in self._chunks:
                self.check_user(user_id)
                rows = self.db.rows(f"SELECT {CHUNK_COLUMNS} FROM memory_chunks c WHERE c.tenant_id = %(tenant)s "
                                  "AND c.scope = %(scope)s AND c.user_id = %(user)s AND c.status = 'active' "
                                  "ORDER BY c.session_id, c.source, c.timestamp_ms, c.id",
                                  {"tenant": self.tenant, "scope": self.scope, "user": user_id})
                chunks, order, last = [], 0, None
                for r in rows:
                    key = (r["session_id"], r["source"])
                    order = order + 1 if key == last else 0
                    last = key
                    chunks.append(chunk_from_row(r, order))
                    self._keys[r["memory_id"]] = (int(r["timestamp_ms"] or 0), int(r["id"]))
                chunks.sort(key=lambda c: c.memory_id)
                self._chunks[user_id] = (chunks, {c.memory_id: i for i, c in enumerate(chunks)})
            return self._chunks[user_id]

    def vectors(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored `vec_full` vector of each chunk that has one."""
        rows = self.db.rows("SELECT c.memory_id, e.embedding::text AS v FROM memory_chunks c "
                          "JOIN memory_chunk_embeddings e ON e.chunk_id = c.id WHERE c.memory_id = ANY(%(ids)s)",
                          {"ids": list(memory_ids)})
        return {r["memory_id"]: np.array(json.loads(r["v"]), dtype=np.float64) for r in rows}

    # -- recall ------------------------------------------------------------------------------
    def _params(self, user_id: str, query: str, qvec: np.ndarray, depth: int, **extra) -> dict:
        return {"tenant": self.tenant, "scope": self.scope, "session": None, "agent": None, "user": user_id,
                "text": query, "vec": query_literal(qvec), "depth": int(depth), **extra}

    def route_hits(self, user_id: str, query: str, qvec: np.ndarray, depth: int) -> dict[str, list[tuple[str, int, float]]]:
        """Each route's `(memory_id, rank, raw score)`, rank 1 best, as PostgreSQL numbers them."""
        rows = self.db.rows(recall_sql(), self._params(user_id, query, qvec, depth))
        out: dict[str, list[tuple[str, int, float]]] = {r: [] for r in ROUTES}
        for r in rows:
            out[r["route"]].append((r["memory_id"], int(r["rn"]), float(r["raw"])))
        for hits in out.values():
            hits.sort(key=lambda h: h[1])
        return out

    def service_pool(self, user_id: str, query: str, qvec: np.ndarray, top_k: int) -> list[str]:
        """The memory_ids of the service's own pool for `top_k`, in the order PostgreSQL gives it."""
        candidate_limit = max(4 * top_k, 32)
        route_limit = max(2 * candidate_limit, 40)
        rows = self.db.rows(service_pool_sql(), self._params(user_id, query, qvec, route_limit, limit=candidate_limit))
        return [r["memory_id"] for r in rows]

    def recall(self, user_id: str, query: str, qvec: np.ndarray, depth: int, top_k: int = 4) -> RecallPool:
        """Every route's list to `depth`, plus the session chunks of every session they touch.

        Rows are in the order that breaks ties as the service does for `top_k`: its pool in
        PostgreSQL's order, then the other session chunks newest first (the order it fetches
        supported sessions in), then the rest by memory_id.
        """
        chunks, index = self._user_chunks(user_id)
        hits = self.route_hits(user_id, query, qvec, depth)
        found = {index[m] for route_hits in hits.values() for m, _, _ in route_hits if m in index}
        touched = {chunks[i].session_id for i in found}
        found.update(i for i, c in enumerate(chunks) if c.kind == "session" and c.session_id in touched)
        first = {m: k for k, m in enumerate(self.service_pool(user_id, query, qvec, top_k))}

        def tie_key(i: int) -> tuple:
            c = chunks[i]
            if c.memory_id in first:
                return (0, first[c.memory_id], 0, "")
            if c.kind == "session":
                ts, cid = self._keys[c.memory_id]
                return (1, -ts, -cid, "")
            return (2, 0, 0, c.memory_id)

        rows = sorted(found, key=tie_key)
        pos = {r: k for k, r in enumerate(rows)}
        ranks = np.zeros((len(rows), len(ROUTES)), dtype=np.int32)
        scores = np.full((len(rows), len(ROUTES)), np.nan)
        for j, route in enumerate(ROUTES):
            for mid, rank, raw in hits[route]:
                if mid in index:
                    ranks[pos[index[mid]], j] = rank
                    scores[pos[index[mid]], j] = raw
        picked = [chunks[r] for r in rows]
        stored = self.vectors([c.memory_id for c in picked])
        vectors, _ = unit_rows([stored.get(c.memory_id) for c in picked])
        return RecallPool(query, user_id, tuple(picked), ranks, scores, vectors, depth=depth,
                          neighbors=neighbors_of(chunks), user_chunks={c.memory_id: c for c in chunks},
                          tie_order="memsense")

    def close(self) -> None:
        self.db.close()


def _parse_vector(text: str | None) -> np.ndarray | None:
    return None if text is None else np.array(json.loads(text), dtype=np.float32)


def stored_route_vectors(store: PostgresStore, user_id: str, chunks: Sequence[Chunk], dim: int) -> dict[str, np.ndarray]:
    """The seven stored vectors of each chunk, one row per chunk (zeros where none), for a copy."""
    cols = ", ".join(f"e.{col}::text AS {route}" for route, col in ROUTE_COLUMNS.items())
    rows = store.db.rows(f"SELECT c.memory_id, {cols} FROM memory_chunks c JOIN memory_chunk_embeddings e "
                       "ON e.chunk_id = c.id WHERE c.tenant_id = %(tenant)s AND c.scope = %(scope)s "
                       "AND c.user_id = %(user)s AND c.status = 'active'",
                       {"tenant": store.tenant, "scope": store.scope, "user": user_id})
    at = {c.memory_id: i for i, c in enumerate(chunks)}
    out = {route: np.zeros((len(chunks), dim), dtype=np.float32) for route in ROUTE_COLUMNS}
    for r in rows:
        i = at.get(r["memory_id"])
        for route in ROUTE_COLUMNS:
            v = _parse_vector(r[route])
            if i is not None and v is not None and v.shape[0] == dim:
                out[route][i] = v
    return out
