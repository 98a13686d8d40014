"""The run history of the open store, as the app keeps and reads it (`core.evaluation.history`).

Every evaluation, tune, diagnose and fix run the app makes is kept in `<store>.history.sqlite`
beside the store by the store's workspace (`core.evaluation.workspace.Workspace.keep`), as the command
line keeps its own, so the History view lists both, across restarts. The Evaluation view's and the
auto-tuner's runs are kept on this object's own task runner (a SHA-256 of the question file, a SQLite
write); reading runs there too (every run's per-question results); `recorded` follows each run kept,
`listed` each read. A history that cannot be written is a warning (`failed`): the run's figures on
screen stand.

A run the app keeps is read alone and added to the runs read before (a history re-read whole after
every run made a long day's use slower at every run). The command line (or a second window) writes to
the same file: the file (a team's shared database: its run ids) is looked at every `POLL_MS`, and runs kept or deleted by another process are
said in one line (`changed_elsewhere`) and the list read again, so nothing shown is stale.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from core.evaluation.experiments import run_names, set_run_name
from core.evaluation.history import History, Run, history_path
from core.evaluation.shared_runs import SharedHistory
from core.evaluation.workspace import Kept
from memsense_gui.state.shared_runs import SharedRuns
from memsense_gui.workers.runner import Job, Task, TaskRunner

Locate = Callable[[], "tuple[str | None, str]"]
"""The open store's location (None: no store) and its model's name as the engine gives it."""


Keep = Callable[[Job], Kept]
"""A run's keeping, on the history's runner (`core.evaluation.workspace_runs`: scores it and keeps it)."""

Where = Path | str
"""Where runs are read: a store's history file (a Path), or a team's shared runs database (its URL)."""

POLL_MS = 2000
"""How often the runs are looked at for runs another process kept or deleted."""

Read = tuple[list[Run], dict[int, tuple[str, str]], list[str], list[int]]
"""Runs that read, their names and notes, a line for each damaged run, and the id of every run kept."""


def _open(where: Where, create: bool) -> History:
    return History(where, create=create) if isinstance(where, Path) else SharedHistory(where, create=create)


def read_runs(where: Where, after: int | None = None, task: Job | None = None) -> Read:
    """Worker thread: every run kept at `where` that reads (those after run `after`; none when nothing was
    kept yet), their names and notes, a line for each damaged run, and every run's id."""
    if isinstance(where, Path) and not where.exists():
        return [], {}, [], []
    with _open(where, create=False) as history:
        runs, damaged = history.readable_runs(after)
        return runs, run_names(history), damaged, history.run_ids()


def run_ids(where: Where, task: Job | None = None) -> list[int]:
    """Worker thread: the id of every run kept at `where` (none when there is no history)."""
    if isinstance(where, Path) and not where.exists():
        return []
    with _open(where, create=False) as history:
        return history.run_ids()


def _stamp(where: Where) -> tuple[int, int] | None:
    """A history file's (mtime, size); None for a shared database (its run ids are read each time)."""
    if not isinstance(where, Path):
        return None
    try:
        st = os.stat(where)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def name_run(where: Where, run_id: int, name: str | None, note: str | None, task: Job | None = None) -> int:
    """Worker thread: give run `run_id` a name or a note (`core.evaluation.experiments.set_run_name`)."""
    with _open(where, create=True) as history:
        history.run(run_id)
        set_run_name(history, run_id, name=name, note=note)
    return run_id


class RunHistory(QObject):
    """Keep a run (`record`) and list the runs (`list_runs`) of the open store."""

    recorded = Signal(int)  # run id
    listed = Signal(object)  # list[Run] of the open store
    named = Signal(int)  # run id: its name or note changed
    failed = Signal(str)  # a warning: the run was not kept, or the history could not be read
    changed_elsewhere = Signal(str)  # one line: another process kept or deleted runs; the list is read again

    def __init__(self, locate: Locate, parent: QObject | None = None, shared: SharedRuns | None = None):
        super().__init__(parent)
        self.locate = locate
        self.shared = shared  # a team's runs database, when one is set: runs are kept and read there
        self.runner = TaskRunner("memsense-history", self)
        self.names: dict[int, tuple[str, str]] = {}  # run id -> (name, note), as last read
        self.runs: list[Run] = []  # of `_read_from`, as last read
        self._read_from: Where | None = None
        self._ids: set[int] = set()  # every run id in the file at the last read (damaged runs too)
        self._mine: set[int] = set()  # runs this app kept
        self._stamp: tuple[int, int] | None = None  # the file's (mtime, size) when last looked at
        self._looking = False
        self.closed = False  # the window closed: nothing more is read or kept (a job ending then asks)
        self.recorded.connect(self._mine.add)
        self.poll = QTimer(self)
        self.poll.setInterval(POLL_MS)
        self.poll.timeout.connect(self._look)
        self.poll.start()

    def path(self) -> Path | None:
        location, _ = self.locate()
        return history_path(location) if location else None

    def source(self) -> Path | str | None:
        """Where runs are read: the shared database's URL when one is set, else the store's history file."""
        url = self.shared.url() if self.shared is not None else None
        return url or self.path()

    def shown(self) -> str:
        """Where runs are read, to show (a shared database's password masked)."""
        if self.shared is not None and self.shared.address:
            return f"{self.shared.address} (shared, as {self.shared.made_by()})"
        return str(self.path() or "no store open")

    def record(self, kind: str, keep: Keep) -> Task | None:
        """Keep a run of the open store; `recorded` when kept, `failed` with the reason when not."""
        location, _ = self.locate()
        if not location or self.closed:
            return None
        return self.runner.submit(f"keep a {kind} run", keep, succeeded=lambda kept: self._kept(kind, kept),
                                  failed=lambda e: self.failed.emit(f"this {kind} run was not kept in the history ({e})"))

    def _kept(self, kind: str, kept: Kept) -> None:
        if kept.run_id is None:
            self.failed.emit(f"this {kind} run was not kept in the history ({kept.reason})")
        else:
            self.recorded.emit(kept.run_id)

    def list_runs(self, whole: bool = True) -> Task | None:
        """Read the open store's runs: all of them, or (not `whole`) those after the last run read."""
        if self.closed:
            return None
        path = self.source()
        if path is None:
            self.runs, self._read_from, self._ids = [], None, set()
            self.listed.emit([])
            return None
        after = self.runs[-1].id if not whole and path == self._read_from and self.runs else None
        return self.runner.submit("read the run history", read_runs, path, after,
                                  succeeded=lambda payload: self._read(path, after, payload),
                                  failed=lambda e: self.failed.emit(f"the run history cannot be read ({e})"))

    def own(self, run_id: int) -> int:
        """Any thread: run `run_id` was kept by this app (a diagnose or search that a newer one replaced
        keeps its run unannounced: it is not another process's). Returns `run_id`."""
        self._mine.add(run_id)
        return run_id

    def _read(self, path: Where, after: int | None, payload: Read) -> None:
        runs, names, damaged, ids = payload
        if path != self.source():
            return  # another store opened since: its own read follows
        if after is not None and path == self._read_from:
            if self._ids - set(ids) or any(i <= after and i not in self._ids for i in ids):
                self.list_runs()  # runs deleted (or ids reused) under the read: read whole, said by its `_read`
                return
            merged = {r.id: r for r in self.runs}
            merged.update((r.id, r) for r in runs)
            runs = [merged[i] for i in sorted(merged)]
        before = self._ids if path == self._read_from else None
        self.runs, self.names, self._read_from, self._ids = runs, names, path, set(ids)
        self._stamp = _stamp(path)
        self.listed.emit(runs)
        if before is not None:
            self._say_elsewhere(sorted(set(ids) - before - self._mine), sorted(before - set(ids)))
        if damaged:
            more = f" (and {len(damaged) - 1} more damaged runs)" if len(damaged) > 1 else ""
            self.failed.emit(f"{damaged[0]}{more}; the other runs are listed")

    def _look(self) -> None:
        """Every `POLL_MS`: when the history file changed since it was read, which runs it now holds."""
        path = self.source()
        if path is None or path != self._read_from or self._looking or self.closed:
            return
        stamp = _stamp(path)
        if stamp is not None and stamp == self._stamp:
            return
        self._stamp, self._looking = stamp, True
        self.runner.submit("look at the run history", run_ids, path, succeeded=lambda ids: self._looked(path, ids),
                           failed=lambda _e: setattr(self, "_looking", False))

    def _looked(self, path: Where, ids: list[int]) -> None:
        self._looking = False
        if path != self._read_from or path != self.source():
            return
        added, removed = set(ids) - self._ids - self._mine, self._ids - set(ids)
        if added or removed:  # another process: read the list whole (its `_read` says what changed)
            self.list_runs()

    def _say_elsewhere(self, added: list[int], removed: list[int]) -> None:
        parts = [f"{_runs(added)} kept" if added else "", f"{_runs(removed)} deleted" if removed else ""]
        if added or removed:
            self.changed_elsewhere.emit(f"The run history was changed by another process ({', '.join(p for p in parts if p)}"
                                        "); the list is read again.")

    def name(self, run_id: int, name: str | None = None, note: str | None = None) -> Task | None:
        """Give a run of the open store a name or a note; `named` follows, then the list is read again."""
        path = self.source()
        if path is None or self.closed:
            return None
        return self.runner.submit("name a run", name_run, path, run_id, name, note, succeeded=self._named,
                                  failed=lambda e: self.failed.emit(f"run {run_id} was not renamed ({e})"))

    def _named(self, run_id: int) -> None:
        self.named.emit(run_id)
        self.list_runs()

    def shutdown(self) -> None:
        self.closed = True
        self.poll.stop()
        self.runner.shutdown(wait=False)


def _runs(ids: list[int]) -> str:
    shown = ", ".join(map(str, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return f"run {shown}" if len(ids) == 1 else f"runs {shown}"
