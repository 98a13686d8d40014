"""A read-only session with a live Memsense database (PostgreSQL + pgvector, SPEC §10), and
the checks that it is one: the address, the connection, the schema and the tenant's scope.

Nothing is ever written: the session is `default_transaction_read_only`, every transaction is
opened READ ONLY and rolled back, and a failure is one line that says what to fix.
"""
from __future__ import annotations

import re
import threading
from urllib.parse import urlsplit

from core.errors import MemsenseError
from core.redact import redact, redact_url

CONNECT_TIMEOUT_S = 5
"""libpq's connect_timeout: the deadline of opening a connection (resolving, TCP, login)."""
STATEMENT_TIMEOUT_MS = 60_000
"""PostgreSQL's statement_timeout, set for the session and again (SET LOCAL) in every transaction,
so a pooler that drops session settings cannot lift it: a read the server cannot finish in time
is cancelled by the server and reported as one line."""
MEMSENSE_TABLES = ("memory_chunks", "memory_chunk_embeddings")


def is_postgres(location: object) -> bool:
    return str(location).startswith(("postgresql://", "postgres://"))


def check_address(dsn: str) -> None:
    """Refuse an address libpq would read otherwise than it looks: an '@' in the user or the
    password ends them at its first '@' (so the rest of the password would be taken for the
    host, and named in libpq's error)."""
    if is_postgres(dsn) and urlsplit(dsn).netloc.count("@") > 1:
        raise MemsenseError(f"{redact_url(dsn)} holds more than one '@': write an '@' inside the user or the "
                            "password as %40 (postgresql://USER:PASSWORD@HOST:PORT/DATABASE)")


def connection_error(dsn: str, exc: Exception) -> MemsenseError:
    """One line for a failed connection, saying what to fix."""
    text = redact(" ".join(str(exc).split()))
    detail = re.sub(r"^connection (failed|is bad): ", "", text)
    detail = re.sub(r'^connection to server at "[^"]*", port \d+ failed: (FATAL: )?', "", detail)
    where, low = redact_url(dsn), text.lower()
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


class ReadOnlySession:
    """One read-only connection, shared by threads one statement at a time, reopened once
    when the server dropped it."""

    def __init__(self, dsn: str):
        self.dsn = dsn
        self.location = redact_url(dsn)
        self.conn = self._connect()
        self._lock = threading.RLock()

    def _connect(self):
        """A read-only session: `default_transaction_read_only`, and READ ONLY transactions."""
        import psycopg
        from psycopg.rows import dict_row

        check_address(self.dsn)
        try:
            conn = psycopg.connect(
                self.dsn, connect_timeout=CONNECT_TIMEOUT_S, autocommit=False, row_factory=dict_row,
                prepare_threshold=None,
                options=f"-c default_transaction_read_only=on -c statement_timeout={STATEMENT_TIMEOUT_MS}")
        except psycopg.ProgrammingError as exc:  # a malformed address
            raise MemsenseError(f"{self.location} is not a PostgreSQL address ({redact(exc)}); "
                                "write postgresql://USER:PASSWORD@HOST:PORT/DATABASE") from None
        except psycopg.Error as exc:
            raise connection_error(self.dsn, exc) from None
        conn.read_only = True
        return conn

    def rows(self, sql: str, params: dict | None = None) -> list[dict]:
        """The rows of one statement, in a READ ONLY transaction that is rolled back."""
        import psycopg

        with self._lock:
            if self.conn.closed or self.conn.broken:  # the server restarted or dropped us: one new session
                self.conn = self._connect()
            try:
                with self.conn.cursor() as cur:  # the deadline of this transaction, whatever the session says
                    cur.execute(f"SET LOCAL statement_timeout = {int(STATEMENT_TIMEOUT_MS)}")
                    cur.execute(sql, params or {})
                    return cur.fetchall()
            except psycopg.errors.QueryCanceled:
                raise MemsenseError(f"the Memsense database {self.location} did not finish a read within "
                                    f"{STATEMENT_TIMEOUT_MS / 1000:g} s (statement_timeout); is it overloaded?") from None
            except psycopg.OperationalError as exc:
                if self.conn.broken:
                    raise MemsenseError(f"the connection to the Memsense database {self.location} was lost "
                                        f"({redact(' '.join(str(exc).split()))}); what was running stopped there "
                                        "(no figure of it is shown), and the next search or run reconnects") from None
                raise connection_error(self.dsn, exc) from None
            except psycopg.errors.UndefinedColumn as exc:  # a Memsense of another version
                column = re.search(r'column "?([\w.]+)"? does not exist', str(exc))
                raise MemsenseError(f"the Memsense database {self.location} has no column "
                                    f"{column.group(1).split('.')[-1] if column else '(unnamed)'} that this reproduction "
                                    "reads: its schema is from another Memsense version; connect to a database of the "
                                    "Memsense version this app reproduces (SPEC §10), or migrate it") from None
            except psycopg.Error as exc:
                raise MemsenseError(f"the Memsense database {self.location} failed a read "
                                    f"({redact(str(exc).strip().splitlines()[0])})") from None
            finally:
                if not self.conn.closed and not self.conn.broken:
                    self.conn.rollback()

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


def check_schema(db: ReadOnlySession) -> None:
    """Raise unless the database holds Memsense's two tables."""
    found = {r["table_name"] for r in db.rows(
        "SELECT table_name, count(*) AS n FROM information_schema.columns "
        "WHERE table_name IN ('memory_chunks', 'memory_chunk_embeddings') GROUP BY table_name")}
    missing = [t for t in MEMSENSE_TABLES if t not in found]
    hidden = [t for t in missing if db.rows("SELECT to_regclass(%(t)s) IS NOT NULL AS here", {"t": t})[0]["here"]]
    if hidden:  # the table is there; the role may not read it (information_schema shows only what it may)
        role = db.rows("SELECT current_user AS role")[0]["role"]
        raise MemsenseError(f"the role {role} may not read the table {', '.join(hidden)} of the Memsense database "
                            f"{db.location} (permission denied); connect as a role that may, or grant it: GRANT "
                            f"SELECT ON {', '.join(hidden)} TO {role}")
    if missing:
        raise MemsenseError(f"{db.location} is not a Memsense database: no table {', '.join(missing)} "
                            "(give the address of the database the Memsense service uses: --store, or Database in the app's "
                            "Connect dialog)")


def check_scope(db: ReadOnlySession, tenant: str, scope: str) -> None:
    """Raise unless some chunk has this tenant and scope; the message lists those there are."""
    rows = db.rows("SELECT 1 FROM memory_chunks WHERE tenant_id = %(tenant)s AND scope = %(scope)s LIMIT 1",
                   {"tenant": tenant, "scope": scope})
    if rows:
        return
    pairs = db.rows("SELECT tenant_id, scope, count(*) AS n FROM memory_chunks "
                    "GROUP BY tenant_id, scope ORDER BY n DESC LIMIT 10")
    known = ", ".join(f"--tenant {p['tenant_id']} --scope {p['scope']} ({p['n']} chunks)" for p in pairs) or "none"
    raise MemsenseError(f"no chunks for tenant {tenant!r} and scope {scope!r} in {db.location}; "
                        f"there are: {known}")
