"""A live Memsense database (PostgreSQL + pgvector, SPEC §10) opened as a read-only store.

Recall runs in the database the way Memsense's phase 1 does: the same scoped rows
(`tenant_id`, `scope`, `user_id`, `status = 'active'`), each dense route ordered by pgvector
cosine with `ROW_NUMBER`, the lexical route by `ts_rank_cd` over
`websearch_to_tsquery('english')`; but every route's list is kept as deep as live tuning needs
and comes back with its raw scores, so fusion, turn support and MMR run in `core` unchanged.

Nothing is ever written: every session is `default_transaction_read_only` and every
transaction is opened READ ONLY and rolled back.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from core.errors import MemsenseError
from core.rank.pool import RecallPool, neighbors_of, unit_rows
from core.records import DEFAULT_MEMORY_SCORE, ROUTES, Chunk

SESSION_SOURCE = "eval_ingest_session"
TURN_SOURCE = "eval_ingest_turn"
DEFAULT_TENANT = "default"
DEFAULT_SCOPE = "user"
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_MS = 60_000

ROUTE_COLUMNS: dict[str, str] = {
    "vec_full": "embedding",
    "vec_user": "embedding_user",
    "vec_asst": "embedding_assistant",
    "vec_next_user": "embedding_next_user",
    "facet_personal_info": "embedding_facet_personal_info",
    "facet_preferences": "embedding_facet_preferences",
    "facet_events": "embedding_facet_events",
}
"""The dense routes and the `memory_chunk_embeddings` column behind each (§10)."""

LEXICAL_DOCUMENT = "to_tsvector('english', COALESCE(f.task_tag, '') || ' ' || COALESCE(f.content, ''))"

_SESSION_NUMBER = re.compile(r"session[_-]?(\d+)$")


def is_postgres(location: object) -> bool:
    return str(location).startswith(("postgresql://", "postgres://"))


def redact(dsn: str) -> str:
    """The DSN with any password replaced by ***, for messages."""
    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def query_literal(vector: Sequence[float]) -> str:
    """The query vector as Memsense sends it to PostgreSQL: each component to 8 decimals."""
    return "[" + ",".join(f"{float(x):.8f}" for x in vector) + "]"


_FILTERED_EMBEDDINGS = ("embedding", "embedding_user", "embedding_assistant", "embedding_facet_personal_info",
                        "embedding_facet_preferences", "embedding_facet_events", "embedding_next_user")
_PHASE1_ROUTES = ("vec_full", "vec_user", "vec_asst", "lexical", "facet_personal_info", "facet_preferences",
                  "facet_events", "vec_next_user")
"""Memsense's phase 1 reads these columns and runs these routes in this order; the same shape here
gives PostgreSQL the same plan, so its order among tied rows is the service's."""


def _filtered() -> str:
    """The scoped rows of one search (tenant, scope, optional session, agent and user, active)."""
    emb = ", ".join(f"e.{col}" for col in _FILTERED_EMBEDDINGS)
    return f"""filtered AS (
    SELECT c.id, c.memory_id, c.content, c.tags, c.task_tag, c.score, c.timestamp_ms,
           c.session_id, c.agent_id, c.user_id, c.memory_kind, c.source, c.next_user_text, {emb}
    FROM memory_chunks c
    LEFT JOIN memory_chunk_embeddings e ON e.chunk_id = c.id
    WHERE c.tenant_id = %(tenant)s
      AND c.scope = %(scope)s
      AND (%(session)s::text IS NULL OR c.session_id = %(session)s)
      AND (%(agent)s::text IS NULL OR c.agent_id = %(agent)s)
      AND (%(user)s::text IS NULL OR c.user_id = %(user)s)
      AND c.status = 'active'
  )"""


def _route_cte(route: str, raw: bool) -> str:
    """One route's ranked list: `ROW_NUMBER` over cosine (dense) or `ts_rank_cd` (lexical)."""
    if route == "lexical":
        order = f"ts_rank_cd({LEXICAL_DOCUMENT}, t.tsq)"
        source = "filtered f CROSS JOIN t"
        where = f"t.tsq IS NOT NULL AND t.tsq <> ''::tsquery AND {LEXICAL_DOCUMENT} @@ t.tsq"
    else:
        col = ROUTE_COLUMNS[route]
        order = f"(1 - (f.{col} <=> q.v))"
        source = "filtered f CROSS JOIN q"
        where = f"f.{col} IS NOT NULL AND vector_dims(f.{col}) = q.dims"
    extra = f", {order}::float8 AS raw" if raw else ""
    return f"""r_{route} AS (
    SELECT f.id, ROW_NUMBER() OVER (ORDER BY {order} DESC) AS rn{extra}, '{route}'::text AS route
    FROM {source}
    WHERE {where}
    LIMIT %(depth)s
  )"""


def _with(raw: bool) -> str:
    return (f"WITH {_filtered()},\n  t AS (SELECT websearch_to_tsquery('english', %(text)s) AS tsq),\n"
            "  q AS (SELECT %(vec)s::vector AS v, vector_dims(%(vec)s::vector) AS dims),\n  "
            + ",\n  ".join(_route_cte(r, raw) for r in _PHASE1_ROUTES))


def recall_sql() -> str:
    """Every route's ranked list with its rank (`ROW_NUMBER`) and raw score, `depth` deep."""
    union = " UNION ALL ".join(f"SELECT id, rn, raw, route FROM r_{r}" for r in _PHASE1_ROUTES)
    return _with(raw=True) + f"\nSELECT f.memory_id, u.route, u.rn, u.raw FROM ({union}) u JOIN filtered f ON f.id = u.id"


def service_pool_sql() -> str:
    """The service's own pool (its `route_limit` per route, RRF `k` = 15 summed in the database,
    best `candidate_limit`), kept only for its order: PostgreSQL's order among tied rows."""
    union = "\n      UNION ALL ".join(f"SELECT id, rn, route FROM r_{r}" for r in _PHASE1_ROUTES)
    return _with(raw=False) + f""",
  rrf AS (
    SELECT id, SUM(1.0 / (15 + rn)) AS rrf_score, ARRAY_AGG(DISTINCT route ORDER BY route) AS routes
    FROM (
      {union}
    ) u
    GROUP BY id
  )
  SELECT f.id AS chunk_id, f.memory_id, f.content, f.tags, f.task_tag, f.score, f.timestamp_ms,
         f.session_id, f.agent_id, f.user_id, f.memory_kind, f.source, f.next_user_text,
         f.embedding::text AS embedding, r.rrf_score, r.routes
  FROM rrf r
  JOIN filtered f ON f.id = r.id
  ORDER BY r.rrf_score DESC
  LIMIT %(limit)s"""


CHUNK_COLUMNS = ("c.id, c.memory_id, c.user_id, c.session_id, c.source, c.content, c.tags, c.task_tag, "
                 "c.memory_kind, c.score, c.timestamp_ms, c.facet_personal_info, c.facet_preferences, "
                 "c.facet_events, c.next_user_text")


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


def connection_error(dsn: str, exc: Exception) -> MemsenseError:
    """One line for a failed connection, saying what to fix."""
    text = " ".join(str(exc).split())
    detail = re.sub(r"^connection (failed|is bad): ", "", text)
    detail = re.sub(r'^connection to server at "[^"]*", port \d+ failed: (FATAL: )?', "", detail)
    where, low = redact(dsn), text.lower()
    if "refused" in low or "timeout expired" in low or "no route" in low or "could not translate host" in low \
            or "resolve host" in low:
        return MemsenseError(f"no PostgreSQL answers at {where} ({detail}); start the database or fix host and port")
    if "invalid" in low and "connection option" in low or "invalid dsn" in low or "missing" in low and "=" in low:
        return MemsenseError(f"{where} is not a PostgreSQL address ({detail}); "
                             "write postgresql://USER:PASSWORD@HOST:PORT/DATABASE")
    if "password" in low or "authentication" in low or ("role" in low and "does not exist" in low):
        return MemsenseError(f"PostgreSQL at {where} refused the login ({detail}); give the right user and password "
                             "in the address (postgresql://USER:PASSWORD@HOST:PORT/DATABASE)")
    if "database" in low and "does not exist" in low:
        return MemsenseError(f"{detail} at {where}; name the Memsense database in the address")
    return MemsenseError(f"cannot open the Memsense database {where}: {detail}")


class PostgresStore:
    """One Memsense database, one tenant and scope, read-only."""

    def __init__(self, dsn: str, tenant: str = DEFAULT_TENANT, scope: str = DEFAULT_SCOPE):
        self.dsn, self.tenant, self.scope = dsn, tenant, scope
        self.location = redact(dsn)
        self.conn = self._connect()
        self._lock = threading.RLock()
        self._chunks: dict[str, tuple[list[Chunk], dict[str, int]]] = {}
        self._keys: dict[str, tuple[int, int]] = {}  # memory_id -> (timestamp_ms, id)
        self._check_schema()
        self._check_scope()

    # -- plumbing --------------------------------------------------------------------------
    def _connect(self):
        """A read-only session: `default_transaction_read_only`, and READ ONLY transactions."""
        import psycopg
        from psycopg.rows import dict_row

        try:
            conn = psycopg.connect(
                self.dsn, connect_timeout=CONNECT_TIMEOUT_S, autocommit=False, row_factory=dict_row,
                prepare_threshold=None,
                options=f"-c default_transaction_read_only=on -c statement_timeout={STATEMENT_TIMEOUT_MS}")
        except psycopg.ProgrammingError as exc:  # a malformed address
            raise MemsenseError(f"{self.location} is not a PostgreSQL address ({exc}); "
                                "write postgresql://USER:PASSWORD@HOST:PORT/DATABASE") from None
        except psycopg.Error as exc:
            raise connection_error(self.dsn, exc) from None
        conn.read_only = True
        return conn

    def _rows(self, sql: str, params: dict | None = None) -> list[dict]:
        import psycopg

        with self._lock:
            if self.conn.closed or self.conn.broken:  # the server restarted or dropped us: one new session
                self.conn = self._connect()
            try:
                with self.conn.cursor() as cur:
                    cur.execute(sql, params or {})
                    return cur.fetchall()
            except psycopg.OperationalError as exc:
                if self.conn.broken:
                    raise MemsenseError(f"the connection to the Memsense database {self.location} was lost "
                                        f"({' '.join(str(exc).split())}); the next search reconnects") from None
                raise connection_error(self.dsn, exc) from None
            except psycopg.Error as exc:
                raise MemsenseError(f"the Memsense database {self.location} failed a read "
                                    f"({str(exc).strip().splitlines()[0]})") from None
            finally:
                if not self.conn.closed and not self.conn.broken:
                    self.conn.rollback()

    def _check_schema(self) -> None:
        found = {r["table_name"]: r["n"] for r in self._rows(
            "SELECT table_name, count(*) AS n FROM information_schema.columns "
            "WHERE table_name IN ('memory_chunks', 'memory_chunk_embeddings') GROUP BY table_name")}
        missing = [t for t in ("memory_chunks", "memory_chunk_embeddings") if t not in found]
        if missing:
            raise MemsenseError(f"{self.location} is not a Memsense database: no table {', '.join(missing)} "
                                "(point --store at the database the Memsense service uses)")

    def _check_scope(self) -> None:
        rows = self._rows("SELECT 1 FROM memory_chunks WHERE tenant_id = %(tenant)s AND scope = %(scope)s LIMIT 1",
                          {"tenant": self.tenant, "scope": self.scope})
        if rows:
            return
        pairs = self._rows("SELECT tenant_id, scope, count(*) AS n FROM memory_chunks "
                           "GROUP BY tenant_id, scope ORDER BY n DESC LIMIT 10")
        known = ", ".join(f"--tenant {p['tenant_id']} --scope {p['scope']} ({p['n']} chunks)" for p in pairs) or "none"
        raise MemsenseError(f"no chunks for tenant {self.tenant!r} and scope {self.scope!r} in {self.location}; "
                            f"there are: {known}")

    # -- what is stored ----------------------------------------------------------------------
    def users(self) -> list[str]:
        rows = self._rows("SELECT DISTINCT user_id FROM memory_chunks WHERE tenant_id = %(tenant)s "
                          "AND scope = %(scope)s AND status = 'active' AND user_id IS NOT NULL ORDER BY user_id",
                          {"tenant": self.tenant, "scope": self.scope})
        return [r["user_id"] for r in rows]

    def models(self) -> list[tuple[str, int, int]]:
        """(model, dimension, vectors) stored for the tenant and scope: the `model` column."""
        rows = self._rows("SELECT e.model, vector_dims(e.embedding) AS dim, count(*) AS n FROM memory_chunks c "
                          "JOIN memory_chunk_embeddings e ON e.chunk_id = c.id WHERE c.tenant_id = %(tenant)s "
                          "AND c.scope = %(scope)s AND c.status = 'active' GROUP BY 1, 2 ORDER BY n DESC",
                          {"tenant": self.tenant, "scope": self.scope})
        return [(r["model"], int(r["dim"]), int(r["n"])) for r in rows]

    def summary(self, user_id: str) -> UserSummary:
        row = self._rows(
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
                rows = self._rows(f"SELECT {CHUNK_COLUMNS} FROM memory_chunks c WHERE c.tenant_id = %(tenant)s "
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
        rows = self._rows("SELECT c.memory_id, e.embedding::text AS v FROM memory_chunks c "
                          "JOIN memory_chunk_embeddings e ON e.chunk_id = c.id WHERE c.memory_id = ANY(%(ids)s)",
                          {"ids": list(memory_ids)})
        return {r["memory_id"]: np.array(json.loads(r["v"]), dtype=np.float64) for r in rows}

    # -- recall ------------------------------------------------------------------------------
    def _params(self, user_id: str, query: str, qvec: np.ndarray, depth: int, **extra) -> dict:
        return {"tenant": self.tenant, "scope": self.scope, "session": None, "agent": None, "user": user_id,
                "text": query, "vec": query_literal(qvec), "depth": int(depth), **extra}

    def route_hits(self, user_id: str, query: str, qvec: np.ndarray, depth: int) -> dict[str, list[tuple[str, int, float]]]:
        """Each route's `(memory_id, rank, raw score)`, rank 1 best, as PostgreSQL numbers them."""
        rows = self._rows(recall_sql(), self._params(user_id, query, qvec, depth))
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
        rows = self._rows(service_pool_sql(), self._params(user_id, query, qvec, route_limit, limit=candidate_limit))
        return [r["memory_id"] for r in rows]

    def recall(self, user_id: str, query: str, qvec: np.ndarray, depth: int, top_k: int = 4) -> RecallPool:
        """Every route's list to `depth`, plus the session chunks of every session they touch.

        Rows are in the order that breaks ties as the service does for `top_k`: its pool in
        PostgreSQL's order, then the other session chunks newest first (the order it fetches
        supported sessions in), then the rest by memory_id.
        """
        chunks, index = self._user_chunks(user_id)
        hits = self.route_hits(user_id, query, qvec, depth)
        rows = {index[m] for route_hits in hits.values() for m, _, _ in route_hits if m in index}
        touched = {chunks[i].session_id for i in rows}
        rows.update(i for i, c in enumerate(chunks) if c.kind == "session" and c.session_id in touched)
        first = {m: k for k, m in enumerate(self.service_pool(user_id, query, qvec, top_k))}

        def tie_key(i: int) -> tuple:
            c = chunks[i]
            if c.memory_id in first:
                return (0, first[c.memory_id], 0, "")
            if c.kind == "session":
                ts, cid = self._keys[c.memory_id]
                return (1, -ts, -cid, "")
            return (2, 0, 0, c.memory_id)

        rows = sorted(rows, key=tie_key)
        pos = {r: k for k, r in enumerate(rows)}
        ranks = np.zeros((len(rows), len(ROUTES)), dtype=np.int32)
        scores = np.full((len(rows), len(ROUTES)), np.nan)
        for j, route in enumerate(ROUTES):
            for mid, rank, raw in hits[route]:
                if mid in index:
                    ranks[pos[index[mid]], j] = rank
                    scores[pos[index[mid]], j] = raw
        picked = [chunks[r] for r in rows]
        found = self.vectors([c.memory_id for c in picked])
        vectors, _ = unit_rows([found.get(c.memory_id) for c in picked])
        return RecallPool(query, user_id, tuple(picked), ranks, scores, vectors, depth=depth,
                          neighbors=neighbors_of(chunks), neighbor_chunks={c.memory_id: c for c in chunks},
                          tie_order="memsense")

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


def _parse_vector(text: str | None) -> np.ndarray | None:
    return None if text is None else np.array(json.loads(text), dtype=np.float32)


def stored_route_vectors(store: PostgresStore, user_id: str, chunks: Sequence[Chunk], dim: int) -> dict[str, np.ndarray]:
    """The seven stored vectors of each chunk, one row per chunk (zeros where none), for a copy."""
    cols = ", ".join(f"e.{col}::text AS {route}" for route, col in ROUTE_COLUMNS.items())
    rows = store._rows(f"SELECT c.memory_id, {cols} FROM memory_chunks c JOIN memory_chunk_embeddings e "
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
