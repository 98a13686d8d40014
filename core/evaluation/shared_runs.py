"""Runs shared by a team in PostgreSQL (issue 38, item 3): `--runs-db postgresql://…` keeps and
reads the runs there instead of the store's SQLite history (`core.evaluation.history`).

A shared run is the same run (kind, time, store, model, question file and its SHA-256, configs,
summary, per-question results, returned ids, categories) plus who made it (`made_by`: the name set
in the app's settings, else `MEMSENSE_USER`, else the OS user), so a team sees each other's runs by
name; comparing runs of different question files is refused unless asked
(`core.evaluation.experiments.compare_sides`). Opened to read (`create=False`) nothing is created
or written, so a database user granted only SELECT can list, show and compare; a write by such a
user is one line, and nothing is changed. The password is never shown: every message names the
database by its redacted address (`core.evaluation.study_storage.StudyStorage.shown`).
"""
from __future__ import annotations

import contextlib
import getpass
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.history import COLUMNS, WRITTEN, History, PerQuestion, Run, history_path, run_row
from core.evaluation.study_storage import (CONNECT_TIMEOUT_S, POSTGRES_SCHEMES, StudyStorage, parse_storage,
                                           storage_reason)
from core.redact import redact_url

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS memsense_runs (id BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, "
    "time DOUBLE PRECISION NOT NULL, store TEXT NOT NULL, model TEXT NOT NULL, dataset TEXT NOT NULL, "
    "dataset_sha256 TEXT NOT NULL, configs TEXT NOT NULL, summary TEXT NOT NULL, results TEXT NOT NULL, "
    "made_by TEXT NOT NULL, returned TEXT NOT NULL DEFAULT '{}', categories TEXT NOT NULL DEFAULT '{}')",
    "CREATE TABLE IF NOT EXISTS memsense_run_names (id BIGINT PRIMARY KEY REFERENCES memsense_runs(id) "
    "ON DELETE CASCADE, name TEXT NOT NULL, note TEXT NOT NULL)",
)
SELECT = f"SELECT {COLUMNS}, made_by, returned, categories FROM memsense_runs"
USER_ENV = "MEMSENSE_USER"


def who(name: str | None = None) -> str:
    """Who makes a run: `name` (the app's setting) when given, else $MEMSENSE_USER, else the OS user."""
    for candidate in (name, os.environ.get(USER_ENV)):
        if candidate and candidate.strip():
            return candidate.strip()
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid {os.getuid()}"


def runs_database(url: str) -> StudyStorage:
    """A `--runs-db` address: PostgreSQL only (a file history is the store's own)."""
    scheme = url.strip().partition("://")[0].lower()
    where = parse_storage(url) if scheme in POSTGRES_SCHEMES else None
    if where is None:
        raise MemsenseError(f"--runs-db {redact_url(url.strip())} is not a PostgreSQL address; give postgresql://USER@HOST:PORT/DB "
                            "(without --runs-db the runs stay in the store's own history file)")
    return where


class SharedHistory(History):
    """The runs in a PostgreSQL database: `History`'s reads, plus who made each run."""

    def __init__(self, url: str, create: bool = True, made_by: str | None = None):  # not super().__init__: that opens SQLite
        import psycopg

        self.where = runs_database(url)
        self.path = self.where.shown  # type: ignore[assignment]  # what every inherited message names
        self.made_by = who(made_by)
        dsn = "postgresql://" + self.where.url.split("://", 1)[1]
        try:
            self.db = psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True)  # type: ignore[assignment]
        except psycopg.Error as exc:
            raise self._fault(exc, "reach") from None
        try:
            with self._faults():
                made = self.db.execute("SELECT to_regclass('memsense_run_names') IS NOT NULL").fetchone()
                if create and not (made and made[0]):  # DDL only when missing: a writer may not create tables
                    for statement in SCHEMA:
                        self.db.execute(statement)
                self.db.execute(f"{SELECT} LIMIT 0")
        except BaseException:
            self.db.close()
            raise

    def _fault(self, exc: BaseException, doing: str = "use") -> MemsenseError:
        text = str(exc)
        if "memsense_runs" in text and "does not exist" in text:
            return MemsenseError(f"no shared runs in {self.where.shown} yet: no run has been kept there; run an eval, "
                                 "tune, diagnose or fix with --runs-db first")
        return MemsenseError(f"cannot {doing} the shared runs in {self.where.shown}: {storage_reason(exc)}; "
                             "nothing was changed")

    @contextlib.contextmanager
    def _faults(self) -> Iterator[None]:
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            raise self._fault(exc) from None

    def add(self, kind: str, store: str, model: str, dataset: str, configs: Mapping[str, Config],
            summary: Mapping[str, Any], results: PerQuestion,
            returned: Mapping[str, Mapping[str, list[str]]] | None = None,
            categories: Mapping[str, int] | None = None) -> int:
        row = (*run_row(kind, store, model, dataset, configs, summary, results), self.made_by,
               json.dumps(returned or {}), json.dumps(categories or {}))
        with self._faults():
            got = self.db.execute(f"INSERT INTO memsense_runs ({WRITTEN}, made_by, returned, categories) VALUES "
                                  f"({', '.join(['%s'] * len(row))}) RETURNING id", row).fetchone()
        return int(got[0])

    def _rows(self, where: str = "", args: tuple = ()) -> list[tuple]:
        with self._faults():
            return self.db.execute(f"{SELECT}{where} ORDER BY id", args).fetchall()

    def _shared_run(self, row: tuple) -> Run:
        run = self._run(row[:10])
        made_by, returned, categories = row[10:]
        try:
            r, c = json.loads(returned), json.loads(categories)
        except (TypeError, ValueError, RecursionError):
            r, c = {}, {}  # extra, as in the file history: a damaged row loses that, not the run
        return replace(run, made_by=str(made_by), returned=r if isinstance(r, dict) else {},
                       categories=c if isinstance(c, dict) else {})

    def runs(self) -> list[Run]:
        return [self._shared_run(r) for r in self._rows()]

    def readable_runs(self, after: int | None = None) -> tuple[list[Run], list[str]]:
        runs, damaged = [], []
        for row in self._rows(" WHERE id > %s", (after,)) if after is not None else self._rows():
            try:
                runs.append(self._shared_run(row))
            except MemsenseError as exc:
                damaged.append(str(exc))
        return runs, damaged

    def run_ids(self) -> list[int]:
        with self._faults():
            return [int(r[0]) for r in self.db.execute("SELECT id FROM memsense_runs ORDER BY id").fetchall()]

    def run(self, run_id: int) -> Run:
        rows = self._rows(" WHERE id = %s", (run_id,)) if 1 <= run_id < 2**63 else []
        if not rows:
            raise MemsenseError(f"no run {run_id} in {self.where.shown}; `memsense runs list --runs-db ...` lists them")
        return self._shared_run(rows[0])

    def names(self) -> dict[int, tuple[str, str]]:
        with self._faults():
            rows = self.db.execute("SELECT id, name, note FROM memsense_run_names").fetchall()
        return {int(i): (str(n), str(t)) for i, n, t in rows}

    def set_name(self, run_id: int, name: str, note: str) -> None:
        with self._faults():
            self.db.execute("INSERT INTO memsense_run_names (id, name, note) VALUES (%s, %s, %s) ON CONFLICT (id) "
                            "DO UPDATE SET name = EXCLUDED.name, note = EXCLUDED.note", (run_id, name, note))

    def delete(self, run_id: int) -> None:
        with self._faults():
            self.db.execute("DELETE FROM memsense_runs WHERE id = %s", (run_id,))


def open_history(store: str | Path | None, runs_db: str | None = None, create: bool = True,
                 made_by: str | None = None) -> History:
    """The runs of `store` (its history file), or the shared runs in `runs_db` when given."""
    if runs_db:
        return SharedHistory(runs_db, create=create, made_by=made_by)
    if store is None:
        raise MemsenseError("name the store whose runs to read (--store), or a shared runs database (--runs-db)")
    return History(history_path(store), create=create)
