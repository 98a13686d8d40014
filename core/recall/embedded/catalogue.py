"""The embedded store's catalogue, `memsense.sqlite`: its tables, and opening it locked.

`meta` holds the store's format and model record, `users` one row per user (its vector file,
chunk count and the vector file's checksum), `chunks` every user's chunks keyed by
`(user_id, row)`. The connection holds SQLite's file lock for the store's lifetime (see
`core.recall.embedded.store`).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from core.errors import MemsenseError
from core.recall.embedded.vectors import CHECKSUMS, FORMAT

DB = "memsense.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (user_id TEXT PRIMARY KEY, file TEXT NOT NULL, n INTEGER NOT NULL,
                                  crc INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (user_id TEXT NOT NULL, row INTEGER NOT NULL, memory_id TEXT NOT NULL,
                                   routes INTEGER NOT NULL, payload TEXT NOT NULL,
                                   PRIMARY KEY (user_id, row)) WITHOUT ROWID;
"""


def is_embedded_store(path: Path) -> bool:
    return (path / DB).exists()


def connect(path: Path, writable: bool, exclusive: bool) -> tuple[sqlite3.Connection, str]:
    """The store's database, locked until it is closed, and its format (a new store's is `FORMAT`)."""
    db_path = path / DB
    try:
        if writable:
            db = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None, timeout=0)
        else:
            db = sqlite3.connect(db_path.resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False,
                                 isolation_level=None, timeout=0)
    except sqlite3.DatabaseError as exc:
        raise damaged_store(path, exc) from None
    try:
        _lock(db, exclusive)
        if exclusive:
            db.execute("PRAGMA journal_mode=DELETE")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(SCHEMA)
        fmt = db.execute("SELECT value FROM meta WHERE key='format'").fetchone()
        if fmt is None and exclusive:
            db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
    except sqlite3.DatabaseError as exc:
        db.close()
        if exc.sqlite_errorcode == sqlite3.SQLITE_BUSY:
            doing = "read or written" if exclusive else "written"
            raise MemsenseError(f"the store {path} is open in another process (being {doing}); "
                                "wait for it or close the other memsense or memsense-gui using it") from None
        if exc.sqlite_errorcode == sqlite3.SQLITE_FULL:
            raise write_failed(path, exc, "open the store for writing") from None
        raise damaged_store(path, exc) from None
    if fmt is not None and fmt[0] not in CHECKSUMS:
        db.close()
        raise MemsenseError(f"the store {path} has format {fmt[0]!r}; this memsense reads "
                            f"{' and '.join(map(repr, CHECKSUMS))}")
    return db, FORMAT if fmt is None else fmt[0]


def _lock(db: sqlite3.Connection, exclusive: bool) -> None:
    """Take SQLite's file lock on the database and keep it until the connection closes
    (`locking_mode=EXCLUSIVE`): a writer's exclusive lock at once; a reader's shared lock
    after one read in the normal mode, which rolls back what a killed writer left half-done."""
    if exclusive:
        db.execute("PRAGMA locking_mode=EXCLUSIVE")
        db.execute("BEGIN EXCLUSIVE")
        db.execute("COMMIT")
    else:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        db.execute("PRAGMA locking_mode=EXCLUSIVE")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()


def damaged_store(path: Path, exc: sqlite3.DatabaseError) -> MemsenseError:
    return MemsenseError(f"the store {path} is damaged ({DB}: {exc}); build a new store with "
                         "memsense ingest, or restore the folder from a backup")


def write_failed(path: Path, exc: BaseException, what: str) -> MemsenseError:
    """A write that the disk (or SQLite on it) refused, as one line naming where and why."""
    if isinstance(exc, sqlite3.DatabaseError):
        why = "the disk is full" if exc.sqlite_errorcode == sqlite3.SQLITE_FULL else str(exc)
        where = path / DB
    else:
        assert isinstance(exc, OSError)
        why = exc.strerror or str(exc) or "a short write"
        where = Path(exc.filename) if exc.filename else path
    return MemsenseError(f"cannot {what}: {why} ({where}); free disk space (or fix the folder) and run again")
