"""The run history of the open store, as the app keeps and reads it (`core.evaluation.history`).

Every evaluation, tune, diagnose and fix run the app makes is kept in `<store>.history.sqlite`
beside the store by the store's workspace (`core.evaluation.workspace.Workspace.keep`), as the command
line keeps its own, so the History view lists both, across restarts. The Evaluation view's and the
auto-tuner's runs are kept on this object's own task runner (a SHA-256 of the question file, a SQLite
write); reading runs there too (every run's per-question results); `recorded` follows each run kept,
`listed` each read. A history that cannot be written is a warning (`failed`): the run's figures on
screen stand.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, Signal

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


def _open(where: Path | str, create: bool) -> History:
    """A store's history file (a Path), or a shared runs database (its URL)."""
    return History(where, create=create) if isinstance(where, Path) else SharedHistory(where, create=create)


def read_runs(where: Path | str, task: Job | None = None) -> tuple[list[Run], dict[int, tuple[str, str]], list[str]]:
    """Worker thread: every run kept at `where` that reads (none when nothing was kept yet), their names and
    notes, and a line for each damaged run."""
    if isinstance(where, Path) and not where.exists():
        return [], {}, []
    with _open(where, create=False) as history:
        runs, damaged = history.readable_runs()
        return runs, run_names(history), damaged


def name_run(where: Path | str, run_id: int, name: str | None, note: str | None, task: Job | None = None) -> int:
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

    def __init__(self, locate: Locate, parent: QObject | None = None, shared: SharedRuns | None = None):
        super().__init__(parent)
        self.locate = locate
        self.shared = shared  # a team's runs database, when one is set: runs are kept and read there
        self.runner = TaskRunner("memsense-history", self)
        self.names: dict[int, tuple[str, str]] = {}  # run id -> (name, note), as last read

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
        if not location:
            return None
        return self.runner.submit(f"keep a {kind} run", keep, succeeded=lambda kept: self._kept(kind, kept),
                                  failed=lambda e: self.failed.emit(f"this {kind} run was not kept in the history ({e})"))

    def _kept(self, kind: str, kept: Kept) -> None:
        if kept.run_id is None:
            self.failed.emit(f"this {kind} run was not kept in the history ({kept.reason})")
        else:
            self.recorded.emit(kept.run_id)

    def list_runs(self) -> Task | None:
        path = self.source()
        if path is None:
            self.listed.emit([])
            return None
        return self.runner.submit("read the run history", read_runs, path, succeeded=self._read,
                                  failed=lambda e: self.failed.emit(f"the run history cannot be read ({e})"))

    def _read(self, payload: tuple[list[Run], dict[int, tuple[str, str]], list[str]]) -> None:
        runs, self.names, damaged = payload
        self.listed.emit(runs)
        if damaged:
            more = f" (and {len(damaged) - 1} more damaged runs)" if len(damaged) > 1 else ""
            self.failed.emit(f"{damaged[0]}{more}; the other runs are listed")

    def name(self, run_id: int, name: str | None = None, note: str | None = None) -> Task | None:
        """Give a run of the open store a name or a note; `named` follows, then the list is read again."""
        path = self.source()
        if path is None:
            return None
        return self.runner.submit("name a run", name_run, path, run_id, name, note, succeeded=self._named,
                                  failed=lambda e: self.failed.emit(f"run {run_id} was not renamed ({e})"))

    def _named(self, run_id: int) -> None:
        self.named.emit(run_id)
        self.list_runs()

    def shutdown(self) -> None:
        self.runner.shutdown(wait=False)
