"""Where a shared tuning study lives (issue 38): a PostgreSQL or SQLite database through
Optuna's RDB storage, or an Optuna journal file, named by `--storage`.

`parse_storage` reads the address: `postgresql://USER@HOST:PORT/DB` (driven by psycopg 3 through
SQLAlchemy's `postgresql+psycopg` dialect), `sqlite:///PATH`, or a file path (Optuna's journal).
The password is best left out of the address (it shows in the process list): libpq reads
`PGPASSWORD` and `~/.pgpass`. Whatever the address holds, only its redacted form
(`core.redact.redact_url`) is ever printed or put in an error.

`open_storage` opens it with Optuna's heartbeat (`HEARTBEAT_S`, `GRACE_S`) on the databases: each
worker records that it is alive while it runs a trial, and a trial whose worker stopped recording
for `GRACE_S` (it was killed, or its machine went away) is marked failed by the next worker that
starts a trial (`optuna.storages.fail_stale_trials`). A failed trial is never counted; only
COMPLETE trials are. A journal file has no heartbeat in Optuna: a killed worker's trial stays
RUNNING there, which is likewise never counted.

Every failure to reach, read or write the storage becomes one line (`storage_error`): a server
that does not answer within `CONNECT_TIMEOUT_S`, a refused password, a missing database, a
database set up by a newer Optuna. Nothing in the database is changed by a refusal.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna

from core.errors import MemsenseError
from core.redact import redact, redact_url

HEARTBEAT_S = 5
"""Seconds between a worker's heartbeats while it runs a trial (one small write each)."""
GRACE_S = 30
"""Seconds without a heartbeat after which a RUNNING trial is taken as lost and marked failed."""
CONNECT_TIMEOUT_S = 10
"""Seconds to wait for a database server to answer before saying it cannot be reached."""
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
PG_DIALECT = "postgresql+psycopg"


@dataclass(frozen=True)
class StudyStorage:
    """A study's storage: `kind` is "postgresql", "sqlite" or "journal"; `url` the SQLAlchemy
    URL (a database) or the file path (a journal), secrets included; `shown` the form to print."""

    kind: str
    url: str
    shown: str

    def __str__(self) -> str:  # an f-string naming the storage never shows a password
        return self.shown

    def __repr__(self) -> str:
        return f"StudyStorage({self.kind}, {self.shown})"

    @property
    def path(self) -> Path | None:
        """The file the study is kept in (SQLite or journal), or None for a server."""
        if self.kind == "journal":
            return Path(self.url)
        if self.kind == "sqlite":
            return Path(self.url.split(":///", 1)[1]) if ":///" in self.url else None
        return None


def parse_storage(text: str) -> StudyStorage:
    """A `--storage` address as a `StudyStorage`; an address of another kind is one line."""
    text = text.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        if not text:
            raise MemsenseError("--storage is empty; give postgresql://USER@HOST/DB, sqlite:///FILE or a journal "
                                "file path")
        path = Path(text).expanduser().resolve()
        return StudyStorage("journal", str(path), str(path))
    scheme = scheme.lower()
    if scheme in POSTGRES_SCHEMES:
        url = f"{PG_DIALECT}://{rest}"
        return StudyStorage("postgresql", url, redact_url(f"postgresql://{rest}"))
    if scheme == "sqlite":
        if not rest.startswith("/") or rest == "/":
            raise MemsenseError(f"--storage {redact_url(text)} names no file; write sqlite:///PATH/TO/study.sqlite")
        path = Path(rest[1:]).expanduser().resolve()
        return StudyStorage("sqlite", f"sqlite:///{path}", f"sqlite:///{path}")
    raise MemsenseError(f"--storage {redact_url(text)}: {scheme}:// is not a study storage memsense opens; give "
                        "postgresql://USER@HOST:PORT/DB, sqlite:///FILE or a journal file path")


def open_storage(storage: StudyStorage, *, heartbeat: bool = True) -> optuna.storages.BaseStorage:
    """The Optuna storage (created when new), with the heartbeat on a database when `heartbeat`.
    Failures are `storage_error`'s one line."""
    from core.evaluation.study import file_storage

    try:
        if storage.kind == "journal":
            return file_storage(Path(storage.url))
        args: dict[str, Any] = {"pool_pre_ping": True}
        if storage.kind == "postgresql":
            args["connect_args"] = {"connect_timeout": CONNECT_TIMEOUT_S}
        else:
            args["connect_args"] = {"timeout": CONNECT_TIMEOUT_S}  # the wait on a locked SQLite file
        with warnings.catch_warnings():  # Optuna calls the heartbeat experimental
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(storage.url, engine_kwargs=args,
                                              heartbeat_interval=HEARTBEAT_S if heartbeat else None,
                                              grace_period=GRACE_S if heartbeat else None)
    except Exception as exc:  # SQLAlchemy, psycopg, Optuna's schema check, the file system
        raise storage_error(exc, storage, "open") from None


def check_storage(storage: StudyStorage) -> None:
    """Open `storage` once and let it go: a bad address, a refused password, a server out of
    reach or a newer schema is reported before the minutes of recall a tune spends first."""
    backend = open_storage(storage, heartbeat=False)
    if isinstance(backend, optuna.storages.RDBStorage):
        backend.engine.dispose()


_REASONS: tuple[tuple[str, str], ...] = (
    (r"password authentication failed|authentication failed|no password supplied|role .* does not exist",
     "the user name or password was refused; check them (the password may come from PGPASSWORD or ~/.pgpass)"),
    (r"timeout expired|timed out",
     f"the server did not answer within {CONNECT_TIMEOUT_S} s; check the host, the port and the network"),
    (r"connection refused|could not connect|no route to host|name or service not known|could not translate host"
     r"|nodename nor servname|name resolution|network is unreachable",
     "the server cannot be reached; check the host and the port, and that PostgreSQL is running there"),
    (r"database .* does not exist", "that database does not exist on the server; create it (createdb NAME) or "
                                    "name another"),
    (r"permission denied|read-only|must be owner", "this database user may only read there; use a user with write "
                                                   "access to those tables"),
)


def storage_reason(exc: BaseException) -> str:
    """Why the storage failed, in words a user can act on (a newer Optuna, a refused password,
    a server out of reach...), else the first line of the error; redacted."""
    from core.evaluation.study import storage_reason as first_line

    text = " ".join(str(e) for e in _chain(exc))
    newer = re.search(r"no longer compatible with the table schema \(set up by optuna ([^)]+)\)", text)
    if newer:
        return (f"its tables were set up by Optuna {newer.group(1)}, which this memsense (Optuna "
                f"{optuna.__version__}) cannot read; tune with a memsense of that Optuna version, or use another "
                "database")
    for pattern, reason in _REASONS:
        if re.search(pattern, text, re.IGNORECASE):
            return reason
    return redact(first_line(exc))


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in out:
        out.append(seen)
        seen = seen.__cause__ or seen.__context__
    return out


def storage_error(exc: BaseException, storage: StudyStorage, doing: str = "use") -> MemsenseError:
    """One line for a failure of `storage`: which storage (redacted), and why."""
    return MemsenseError(redact(f"cannot {doing} the tuning study storage {storage.shown}: {storage_reason(exc)}; "
                                "trials already stored in it are kept"))
