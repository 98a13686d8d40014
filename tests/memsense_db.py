"""A real PostgreSQL with pgvector for the tests (the PyPI package `pgserver` ships both),
listening on 127.0.0.1 only, in a temporary folder, started and stopped by the tests; a
Memsense schema (SPEC §10) and the demo data with vectors; a local embedding endpoint in
Memsense's request shapes.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SYSTEM_USER = "pgserver"  # PostgreSQL refuses to run as root; pgserver uses this account
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"

# The tables of SPEC §10, written from its description (column names and types).
SCHEMA = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE memory_chunks (
  id BIGSERIAL PRIMARY KEY,
  memory_id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  session_id TEXT,
  agent_id TEXT,
  user_id TEXT,
  content TEXT NOT NULL,
  memory_kind TEXT NOT NULL DEFAULT 'episodic',
  tags JSONB NOT NULL DEFAULT '[]'::jsonb,
  task_tag TEXT,
  source TEXT NOT NULL DEFAULT 'session',
  score DOUBLE PRECISION NOT NULL DEFAULT 0.5,
  confidence DOUBLE PRECISION NOT NULL DEFAULT 0.7,
  timestamp_ms BIGINT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  facet_personal_info TEXT,
  facet_preferences TEXT,
  facet_events TEXT,
  next_user_text TEXT
);
CREATE TABLE memory_chunk_embeddings (
  chunk_id BIGINT PRIMARY KEY REFERENCES memory_chunks(id) ON DELETE CASCADE,
  embedding vector NOT NULL,
  embedding_user vector,
  embedding_assistant vector,
  embedding_next_user vector,
  embedding_facet_personal_info vector,
  embedding_facet_preferences vector,
  embedding_facet_events vector,
  model TEXT NOT NULL
);
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalPostgres:
    """initdb + pg_ctl from pgserver's bundled PostgreSQL, TCP on 127.0.0.1 only."""

    def __init__(self) -> None:
        import pytest

        commands = pytest.importorskip("pgserver._commands", reason="pgserver (PostgreSQL for the tests) is not "
                                       "installed: it has no wheel for this Python (pyproject.toml, [test])")
        self.bin = commands.POSTGRES_BIN_PATH
        self.root = Path(tempfile.mkdtemp(prefix="memsense-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.run_as = None
        if os.geteuid() == 0:
            import pwd
            import stat

            from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

            ensure_user_exists(SYSTEM_USER)
            ensure_prefix_permissions(self.root)
            ensure_prefix_permissions(self.bin)
            ensure_folder_permissions(self.bin, stat.S_IXGRP | stat.S_IXOTH | stat.S_IRGRP | stat.S_IROTH)
            ensure_folder_permissions(self.bin.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
            ensure_folder_permissions(self.bin.parent / "share", stat.S_IRGRP | stat.S_IROTH)
            entry = pwd.getpwnam(SYSTEM_USER)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
            self.run_as = SYSTEM_USER
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "60", "-o",
                  f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c full_page_writes=off", "start")

    def _run(self, exe: str, *args: str) -> None:
        done = subprocess.run([str(self.bin / exe), *args], user=self.run_as, capture_output=True, text=True,
                              timeout=120)
        if done.returncode:
            log = (self.root / "log").read_text() if (self.root / "log").exists() else ""
            raise RuntimeError(f"{exe} failed: {done.stderr or done.stdout}\n{log}")

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _ms(iso: str, fallback: int) -> int:
    try:
        return int(datetime.fromisoformat(iso).replace(tzinfo=timezone.utc).timestamp() * 1000)
    except ValueError:
        return fallback


def load_demo(dsn: str, chunks, vectors, *, model: str = MODEL_NAME, tenant: str = "default",
              scope: str = "user") -> dict[str, int]:
    """Write the demo chunks as a Memsense service stores them; returns memory_id -> id."""
    import psycopg

    from core.records import DENSE_ROUTES
    from core.recall.memsense.sql import ROUTE_COLUMNS
    from core.recall.memsense.database import SESSION_SOURCE, TURN_SOURCE

    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].user_id, chunks[i].session_number,
                                                      chunks[i].kind != "session", chunks[i].order))
    ids = {}
    with psycopg.connect(dsn, autocommit=False) as conn:
        for i in order:
            c = chunks[i]
            session_id = f"agent:main:openresponses-user:{c.user_id}:session_{c.session_number}"
            row = conn.execute(
                "INSERT INTO memory_chunks (memory_id, tenant_id, scope, session_id, user_id, content, memory_kind, "
                "tags, task_tag, source, score, timestamp_ms, facet_personal_info, facet_preferences, facet_events, "
                "next_user_text) VALUES (%s,%s,%s,%s,%s,%s,%s,%s::jsonb,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
                (c.memory_id, tenant, scope, session_id, c.user_id, c.content, c.memory_kind, json.dumps(list(c.tags)),
                 c.task_tag, SESSION_SOURCE if c.kind == "session" else TURN_SOURCE, c.memory_score,
                 _ms(c.time, 1_700_000_000_000), c.personal_info or None, c.preferences or None, c.events or None,
                 c.next_user_text or None)).fetchone()
            ids[c.memory_id] = row[0]
            cols = ["chunk_id", "model"] + [ROUTE_COLUMNS[r] for r in DENSE_ROUTES]
            vals = [row[0], model] + [_vec(vectors[r][i]) for r in DENSE_ROUTES]
            conn.execute(f"INSERT INTO memory_chunk_embeddings ({', '.join(cols)}) VALUES "
                         f"({', '.join(['%s'] * 2 + ['%s::vector'] * len(DENSE_ROUTES))})", vals)
        conn.commit()
    return ids


def _vec(v) -> str | None:
    return "[" + ",".join(f"{float(x):.8f}" for x in v) + "]" if v.any() else None


def add_oddities(dsn: str) -> None:
    """Rows that make the errors: another tenant, an all-inactive user, a user with no vectors,
    a user whose vectors have another dimension."""
    import psycopg

    content = json.dumps({"user": "Ana: I keep bees.", "assistant": "Tomas: Nice."})
    with psycopg.connect(dsn, autocommit=False) as conn:
        def chunk(mid, user, tenant="default", scope="user", status="active") -> int:
            return conn.execute(
                "INSERT INTO memory_chunks (memory_id, tenant_id, scope, session_id, user_id, content, source, "
                "timestamp_ms, status) VALUES (%s,%s,%s,%s,%s,%s,'eval_ingest_session',1700000000000,%s) RETURNING id",
                (mid, tenant, scope, f"s:{user}:session_1", user, content, status)).fetchone()[0]

        chunk("other-tenant-1", "demo-ana", tenant="acme")
        chunk("inactive-1", "gone-user", status="deleted")
        chunk("novec-1", "pending-user")
        wide = chunk("wide-1", "wide-user")
        conn.execute("INSERT INTO memory_chunk_embeddings (chunk_id, embedding, model) VALUES (%s, %s::vector, %s)",
                     (wide, "[" + ",".join(["0.5"] * 8) + "]", "acme/tiny-8d"))
        conn.commit()


class EmbeddingEndpoint:
    """A loopback embedding endpoint: POST /embed ({input, inputs, model}) and POST
    /v1/embeddings ({model, input}), both answering {"data": [{"embedding": [...]}]}."""

    def __init__(self, encode, model: str = MODEL_NAME, delay_s: float = 0.0):
        self.delay_s = delay_s
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                outer.requests += 1
                if outer.delay_s:
                    time.sleep(outer.delay_s)
                if self.path not in ("/embed", "/v1/embeddings"):
                    self.send_response(404)
                    self.end_headers()
                    return
                text = body.get("input") if self.path.endswith("embeddings") else (body.get("inputs") or [body["input"]])[0]
                vec = [float(x) for x in encode(text)]
                answer = {"data": [{"embedding": vec}]}
                if self.path.endswith("embeddings"):
                    answer["model"] = model
                data = json.dumps(answer).encode()
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the slow-endpoint test): that is the point

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeService:
    """A loopback stand-in for a Memsense service: answers POST /v1/memory/search with `answer`."""

    def __init__(self):
        self.answer: list[dict] = []
        self.asked: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                outer.asked.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                data = json.dumps({"ok": True, "data": {"chunks": outer.answer, "total": len(outer.answer)}}).encode()
                self.send_response(200 if self.path == "/v1/memory/search" else 404)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
