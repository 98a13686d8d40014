"""History: every evaluation, tune, diagnose and fix run, kept in SQLite beside the store.

A run keeps what it needs to be compared and re-opened later: its kind, time, the store (its
location, redacted of any password) and the model that embedded it, the question file and a
SHA-256 of its bytes, every config it ranked (under Memsense's names), a summary, and each
named config's metric values question by question. The file is `<store>.history.sqlite` in
the store folder's parent (a store URL keeps its history in the user's data folder, one file
per URL, under `core.machine.data_dir()`); writing it never touches the store itself.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sqlite3
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.config import Config, from_dict, to_dict
from core.errors import MemsenseError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    time REAL NOT NULL,
    store TEXT NOT NULL,
    model TEXT NOT NULL,
    dataset TEXT NOT NULL,
    dataset_sha256 TEXT NOT NULL,
    configs TEXT NOT NULL,
    summary TEXT NOT NULL,
    results TEXT NOT NULL
)"""
COLUMNS = "id, kind, time, store, model, dataset, dataset_sha256, configs, summary, results"
"""The columns a run is read from, by name: a newer version's extra column is left alone."""
WRITTEN = COLUMNS.removeprefix("id, ")
"""The columns a new run writes (`run_row`'s values, in order); its id is the database's."""
LOCK_WAIT_S = 10.0
"""Seconds a command waits for another process's write to the history to end."""
SQLITE_ID_MAX = 2**63 - 1
QUESTIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS run_questions (
    id INTEGER PRIMARY KEY,
    returned TEXT NOT NULL,
    categories TEXT NOT NULL
)"""
"""Beside a run: each config's returned memory ids per question, and each question's category (a table
of its own: a history written before it, or by a version without it, reads as runs that kept none)."""
PerQuestion = Mapping[str, Mapping[str, Mapping[str, float]]]
"""Config name -> question id -> metric -> value."""


@dataclass(frozen=True)
class Run:
    id: int
    kind: str  # eval | compare | tune | diagnose | fix
    time: float  # seconds since the epoch
    store: str
    model: str
    dataset: str
    dataset_sha256: str
    configs: Mapping[str, Mapping[str, Any]]  # name -> settings under Memsense's names
    summary: Mapping[str, Any]
    results: PerQuestion
    returned: Mapping[str, Mapping[str, list[str]]] = field(default_factory=dict)
    """Config name -> question id -> the memory ids it returned, in order ({} for a run kept without them)."""
    categories: Mapping[str, int] = field(default_factory=dict)
    """Question id -> its category, as the run's question file said ({} when not kept)."""
    made_by: str = ""
    """Who made the run (shared runs, `core.evaluation.shared_runs`; "" in a store's own history)."""

    def config(self, name: str | None = None) -> Config:
        """One of the run's configs (the only one, or by name) as a Config."""
        if name is None:
            if len(self.configs) != 1:
                raise MemsenseError(f"run {self.id} ranked {len(self.configs)} configs ({', '.join(self.configs)}); "
                                    "name one")
            name = next(iter(self.configs))
        if name not in self.configs:
            raise MemsenseError(f"run {self.id} has no config {name!r}; it has {', '.join(self.configs)}")
        return from_dict(self.configs[name])

    def mean(self, metric: str, name: str) -> float | None:
        """Config `name`'s mean of `metric` over the questions it was scored on (None: not scored)."""
        values = [m[metric] for m in self.results.get(name, {}).values() if metric in m]
        return sum(values) / len(values) if values else None

    def metrics(self) -> list[str]:
        """The metrics the run scored, sorted."""
        return sorted({m for per_q in self.results.values() for values in per_q.values() for m in values})

    def head(self) -> dict[str, Any]:
        """The run without its per-question results (for listings)."""
        return {"id": self.id, "kind": self.kind, "time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.time)),
                "store": self.store, "model": self.model, "dataset": self.dataset,
                "dataset_sha256": self.dataset_sha256, "configs": list(self.configs),
                "questions": max((len(v) for v in self.results.values()), default=0), "summary": self.summary,
                "made_by": self.made_by}


def history_path(store: str | Path, data_dir: Path | None = None) -> Path:
    """Where the history of `store` is kept (module docstring)."""
    text = str(store)
    if "://" in text:
        from core import machine

        name = f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.sqlite"
        if data_dir is not None:
            return data_dir / "history" / name
        legacy = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "memsense" / "history" / name
        current = machine.data_dir() / "history" / name  # $MEMSENSE_GUI_HOME, else the platform's data folder
        return legacy if legacy.is_file() and not current.exists() else current  # one kept before this place
    path = Path(store).expanduser().resolve()
    return path.parent / f"{path.name}.history.sqlite"


def store_label(store: str | Path) -> str:
    """The store as history keeps it: a folder's full path, a URL without its user info or query
    (no password kept)."""
    text = str(store)
    if "://" not in text:
        return str(Path(text).expanduser().resolve())
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(text)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def model_key(store: str | Path) -> str:
    """The identity of the model that embedded the store (its meta's model key; "unknown" if none)."""
    from core.recall.backends import open_store

    opened = open_store(store)
    try:
        meta = opened.meta()
    finally:
        opened.close()
    return meta.model_key if meta is not None else "unknown"


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (of standard input for `-`, as the command read it)."""
    from core.files import STDIN, stdin_bytes

    if str(path) == STDIN:
        return hashlib.sha256(stdin_bytes()).hexdigest()
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def history_fault(exc: sqlite3.Error, path: Path) -> MemsenseError:
    """A SQLite error of the history at `path` as one line saying what happened and what to do.
    A history another process is writing is healthy: that message never advises moving it aside."""
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in text:
        return MemsenseError(f"the run history {path} is in use by another process (still busy after "
                             f"{LOCK_WAIT_S:g} s); run the command again when that process is done")
    if code == sqlite3.SQLITE_FULL:
        return MemsenseError(f"the disk holding the run history {path} is full; free disk space")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR):
        return MemsenseError(f"the run history {path} cannot be written ({text}); make the file and its folder "
                             "writable")
    if "no such column" in text or "has no column" in text or "constraint failed" in text:
        return MemsenseError(f"the run history {path} has another shape ({text}): written by another version of "
                             "memsense; use that version, or move the file aside to start a new history")
    return MemsenseError(f"the run history {path} is damaged ({text}); move the file aside to start a new one")


def _runs_of(value: Any) -> bool:
    """True for config name -> question id -> metric -> number (a run's results)."""
    return isinstance(value, dict) and all(
        isinstance(per_q, dict) and all(
            isinstance(m, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in m.values())
            for m in per_q.values()) for per_q in value.values())


def run_row(kind: str, store: str, model: str, dataset: str, configs: Mapping[str, Config],
            summary: Mapping[str, Any], results: PerQuestion) -> tuple:
    """A new run's values for `WRITTEN`, encoded as every history keeps them (this file's and the shared
    runs database's): now as its time, the question file's SHA-256, the configs, summary and results as JSON."""
    return (kind, time.time(), store, model, dataset, file_sha256(dataset),
            json.dumps({n: to_dict(c) for n, c in configs.items()}), json.dumps(summary, default=str),
            json.dumps(results))


class History:
    """The runs of one store (`history_path`). Opened with `create=False` it only reads: no table
    is created and nothing is written (SQLite may roll back what a crash left half-written)."""

    def __init__(self, path: Path, create: bool = True):
        self.path = path
        if not create and not path.exists():
            raise MemsenseError(f"no history at {path}: no evaluation, tune, diagnose or fix has run on this store yet")
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=LOCK_WAIT_S)  # read-write even to read: a crash's journal rolls back
        except sqlite3.Error as exc:
            raise history_fault(exc, path) from None
        try:
            with self._faults():
                if create:
                    self.db.execute(SCHEMA)
                self.db.execute(f"SELECT {COLUMNS} FROM runs LIMIT 0")
        except BaseException:
            self.db.close()
            raise

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    @contextlib.contextmanager
    def _faults(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise history_fault(exc, self.path) from None

    def add(self, kind: str, store: str, model: str, dataset: str, configs: Mapping[str, Config],
            summary: Mapping[str, Any], results: PerQuestion,
            returned: Mapping[str, Mapping[str, list[str]]] | None = None,
            categories: Mapping[str, int] | None = None) -> int:
        """Keep one run (with the ids each config returned and the questions' categories, when given); its id."""
        row = run_row(kind, store, model, dataset, configs, summary, results)
        with self._faults(), self.db:
            cur = self.db.execute(f"INSERT INTO runs ({WRITTEN}) VALUES ({', '.join('?' * len(row))})", row)
            run_id = int(cur.lastrowid or 0)
            if returned or categories:
                self.db.execute(QUESTIONS_SCHEMA)
                self.db.execute("INSERT OR REPLACE INTO run_questions (id, returned, categories) VALUES (?, ?, ?)",
                                (run_id, json.dumps(returned or {}), json.dumps(categories or {})))
        return run_id

    def _with_questions(self, runs: list[Run], run_id: int | None = None, after: int | None = None) -> list[Run]:
        """The runs with what was kept beside them (`QUESTIONS_SCHEMA`: every row, run `run_id`'s, or
        those of runs after run `after`); a run without a row, a history without the table (an older
        version's) or a damaged row: none."""
        sql, args = "SELECT id, returned, categories FROM run_questions", []
        if run_id is not None:
            sql, args = sql + " WHERE id = ?", [run_id]
        elif after is not None:
            sql, args = sql + " WHERE id > ?", [after]
        try:
            with self._faults():
                rows = self.db.execute(sql, args).fetchall()
        except MemsenseError as exc:
            if "no such table" in str(exc):
                return runs
            raise
        kept: dict[int, tuple[dict, dict]] = {}
        for rid, returned, categories in rows:
            try:
                r, c = json.loads(returned), json.loads(categories)
            except (TypeError, ValueError, RecursionError):
                continue  # what a run returned is extra: a damaged row loses that, not the run
            if isinstance(r, dict) and isinstance(c, dict):
                kept[rid] = (r, c)
        return [replace(x, returned=kept[x.id][0], categories=kept[x.id][1]) if x.id in kept else x for x in runs]

    def runs(self) -> list[Run]:
        with self._faults():
            rows = self.db.execute(f"SELECT {COLUMNS} FROM runs ORDER BY id").fetchall()
        return self._with_questions([self._run(r) for r in rows])

    def readable_runs(self, after: int | None = None) -> tuple[list[Run], list[str]]:
        """Every run that reads (of those after run `after`), and one line for each that does not (a
        damaged row is named, the others listed: one bad row never hides a history)."""
        with self._faults():
            rows = self.db.execute(f"SELECT {COLUMNS} FROM runs" + (" WHERE id > ?" if after is not None else "")
                                   + " ORDER BY id", () if after is None else (after,)).fetchall()
        runs, damaged = [], []
        for row in rows:
            try:
                runs.append(self._run(row))
            except MemsenseError as exc:
                damaged.append(str(exc))
        return self._with_questions(runs, after=after), damaged

    def run_ids(self) -> list[int]:
        """The id of every run kept, in order (a cheap look at what changed since a read)."""
        with self._faults():
            return [int(r[0]) for r in self.db.execute("SELECT id FROM runs ORDER BY id").fetchall()]

    def run(self, run_id: int) -> Run:
        row = None
        if -SQLITE_ID_MAX <= run_id <= SQLITE_ID_MAX:  # SQLite's integers are 64-bit: a longer id is no run
            with self._faults():
                row = self.db.execute(f"SELECT {COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise MemsenseError(f"no run {run_id} in {self.path}; `memsense history --store ...` lists them")
        return self._with_questions([self._run(row)], run_id)[0]

    def _run(self, row: tuple) -> Run:
        """A row as a Run, every field checked: a row another program wrote or a disk garbled is
        one line naming the run, not a traceback."""
        rid, kind, when, store, model, dataset, sha, configs, summary, results = row
        try:
            if isinstance(when, bool) or not isinstance(when, (int, float)) or not math.isfinite(when):
                raise ValueError(f"its time {str(when)[:40]!r} is not a number")
            time.localtime(when)  # a time outside the calendar: OverflowError, OSError or ValueError
            fields = [json.loads(text) for text in (configs, summary, results)]
            if not all(isinstance(t, str) for t in (kind, store, model, dataset, sha)):
                raise ValueError("a text field holds something else")
            if not isinstance(fields[0], dict) or not all(isinstance(c, dict) for c in fields[0].values()) \
                    or not isinstance(fields[1], dict) or not _runs_of(fields[2]):
                raise ValueError("its configs, summary or results are not of the shape memsense writes")
        except (TypeError, ValueError, OverflowError, OSError, RecursionError) as exc:
            reason = "its JSON is not valid" if isinstance(exc, json.JSONDecodeError) else \
                "its JSON is nested too deep" if isinstance(exc, RecursionError) else str(exc)[:120]
            raise MemsenseError(f"run {rid} in the run history {self.path} is damaged ({reason}); delete that run "
                                f"(sqlite3 {self.path} 'DELETE FROM runs WHERE id = {rid}') or move the file "
                                "aside") from None
        return Run(rid, kind, float(when), store, model, dataset, sha, *fields)


@dataclass(frozen=True)
class RunDiff:
    """Two runs' values of one metric on the questions both scored."""

    metric: str
    a: tuple[int, str]  # run id, config name
    b: tuple[int, str]
    rows: tuple[tuple[str, float, float], ...]  # question id, value in a, value in b
    only_a: int
    only_b: int

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "a": {"run": self.a[0], "config": self.a[1]},
                "b": {"run": self.b[0], "config": self.b[1]}, "questions": len(self.rows),
                "only_in_a": self.only_a, "only_in_b": self.only_b,
                "wins": sum(b > a for _, a, b in self.rows), "losses": sum(b < a for _, a, b in self.rows),
                "differences": [{"question_id": q, "a": a, "b": b, "diff": b - a} for q, a, b in self.rows if a != b]}


def _side(run: Run, name: str | None) -> tuple[str, Mapping[str, Mapping[str, float]]]:
    if name is None:
        if len(run.results) != 1:
            raise MemsenseError(f"run {run.id} scored {len(run.results)} configs ({', '.join(run.results)}); name one")
        name = next(iter(run.results))
    if name not in run.results:
        raise MemsenseError(f"run {run.id} scored no config {name!r}; it scored {', '.join(run.results) or 'none'}")
    return name, run.results[name]


def compare_runs(a: Run, b: Run, metric: str, name_a: str | None = None, name_b: str | None = None) -> RunDiff:
    """Question by question, `metric` in run a (config `name_a`) against run b."""
    na, va = _side(a, name_a)
    nb, vb = _side(b, name_b)
    common = sorted(set(va) & set(vb))
    missing = [q for q in common if metric not in va[q] or metric not in vb[q]]
    if missing or not common:
        have = sorted(next(iter(va.values()), {}))
        raise MemsenseError(f"the runs do not both have {metric} for their questions; they have {', '.join(have)}")
    rows = tuple((q, float(va[q][metric]), float(vb[q][metric])) for q in common)
    return RunDiff(metric, (a.id, na), (b.id, nb), rows, len(set(va) - set(vb)), len(set(vb) - set(va)))
