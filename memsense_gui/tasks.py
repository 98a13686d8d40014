"""Slow work off the GUI thread (Orange's task pattern).

The work itself is module-level functions that take their inputs plus a cancel token (and a
progress callback when they report progress) and return a result object; widgets only start,
cancel and receive. `TaskRunner` runs them on one dedicated thread, in submission order, so
one engine is never used from two threads at once; results come back as queued signals.
"""
from __future__ import annotations

import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from core.config import Config
from core.errors import MemsenseError
from core.judged import session_docid
from core.pool import RecallPool
from core.rerank import rerank
from core.types import Chunk, Question


class Cancelled(Exception):
    """The task was cancelled before or while it ran (a newer request won)."""


class Task(QObject):
    """One submitted job, living on the GUI thread: `progressed`, then `succeeded` or `failed`.

    The worker thread never touches this object: it reports through its runner (which lives
    as long as the window), and the runner re-emits here on the GUI thread.
    """

    progressed = Signal(int, int, str)  # done, total, what
    succeeded = Signal(object)  # the function's return value
    failed = Signal(object)  # the exception (with `.traceback_text` attached)

    def __init__(self, name: str, runner: "TaskRunner"):
        super().__init__()
        self.name = name
        self.cancel_event = threading.Event()
        self.done = False
        self._runner = runner

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def report(self, done: int, total: int, what: str = "") -> None:
        """Progress callback for the worker thread; delivered queued to the GUI thread."""
        self._runner._reported.emit(id(self), int(done), int(total), str(what))


class TaskRunner(QObject):
    """Runs tasks one at a time on its own thread, in submission order."""

    task_started = Signal(object)  # Task
    task_done = Signal(object)  # Task (after succeeded/failed)
    _reported = Signal(object, int, int, str)  # task id, done, total, what (worker -> GUI thread)
    _finished = Signal(object, bool, object)  # task id, ok, result or exception

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._live: dict[int, Task] = {}
        self._reported.connect(self._relay_progress)
        self._finished.connect(self._relay_finish)

    def submit(
        self,
        name: str,
        fn: Callable[..., Any],
        *args: Any,
        succeeded: Callable[[Any], Any] | None = None,
        failed: Callable[[BaseException], Any] | None = None,
        progressed: Callable[[int, int, str], Any] | None = None,
        **kwargs: Any,
    ) -> Task:
        """Queue `fn(*args, task=task, **kwargs)`; the callbacks are connected before it starts."""
        task = Task(name, self)
        self._live[id(task)] = task
        for signal, slot in ((task.succeeded, succeeded), (task.failed, failed), (task.progressed, progressed)):
            if slot is not None:
                signal.connect(slot)
        self._executor.submit(_run, self, task, fn, args, kwargs)
        self.task_started.emit(task)
        return task

    def _relay_progress(self, key: int, done: int, total: int, what: str) -> None:
        task = self._live.get(key)
        if task is not None:
            task.progressed.emit(done, total, what)

    def _relay_finish(self, key: int, ok: bool, payload: Any) -> None:
        task = self._live.pop(key, None)
        if task is None:
            return
        task.done = True
        (task.succeeded if ok else task.failed).emit(payload)
        self.task_done.emit(task)

    @property
    def busy(self) -> bool:
        return bool(self._live)

    def shutdown(self, wait: bool = False) -> None:
        """Cancel what is queued or running; with `wait`, return once the thread is idle."""
        for task in list(self._live.values()):
            task.cancel()
        self._executor.shutdown(wait=wait, cancel_futures=True)


def _run(runner: TaskRunner, task: Task, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    key = id(task)
    try:
        if task.cancelled:
            raise Cancelled(task.name)
        result = fn(*args, task=task, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the GUI
        exc.traceback_text = traceback.format_exc()  # type: ignore[attr-defined]
        runner._finished.emit(key, False, exc)
    else:
        runner._finished.emit(key, True, result)


# ---- the work itself: module-level functions, no Qt ------------------------------------

@dataclass(frozen=True)
class OpenedStore:
    location: str
    engine: Any
    users: tuple[str, ...]


def open_store(factory: Callable[[str], Any], location: str, task: Task | None = None) -> OpenedStore:
    """Open a store and list its users (Qdrant open + scroll: fast, but never on the GUI thread)."""
    engine = factory(location)
    try:
        users = tuple(engine.users())
    except BaseException:
        engine.close()
        raise
    if not users:
        engine.close()
        raise MemsenseError(f"store {location} holds no conversations; build it again with File > New store…")
    return OpenedStore(str(location), engine, users)


def load_model(engine: Any, task: Task | None = None) -> None:
    """Load the embedding model (several seconds on first use)."""
    engine.load_model()


def user_chunks(engine: Any, user_id: str, task: Task | None = None) -> tuple[str, tuple[Chunk, ...]]:
    return user_id, tuple(engine.chunks(user_id))


@dataclass(frozen=True)
class RecallRequest:
    serial: int
    user_id: str
    query: str
    gold: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RecallResult:
    request: RecallRequest
    pool: RecallPool


def recall(engine: Any, request: RecallRequest, task: Task | None = None) -> RecallResult:
    """Embed the query and run the eight routes (the slow half of a search)."""
    if task is not None and task.cancelled:
        raise Cancelled("recall")
    return RecallResult(request, engine.recall(request.user_id, request.query))


def preset_run(engine: Any, questions: list[Question], cfg: Config, level: str = "memory",
               task: Task | None = None) -> dict[str, list[tuple[str, float]]]:
    """Recall and re-rank every question under one config, for a TREC run: question id ->
    (memory id, or session id at session level; final score) in result order."""
    entries: dict[str, list[tuple[str, float]]] = {}
    for n, q in enumerate(questions):
        if task is not None:
            if task.cancelled:
                raise Cancelled("run")
            task.report(n, len(questions), q.text)
        ranking = rerank(engine.recall(q.user_id, q.text), cfg)
        chunks = [ranking.pool.chunks[r.index] for r in ranking.selected_rows]
        ids = [c.memory_id if level == "memory" else session_docid(c.user_id, c.session_number) for c in chunks]
        entries[q.question_id] = list(zip(ids, (r.final_score for r in ranking.selected_rows)))
    return entries


def close_engine(engine: Any, task: Task | None = None) -> None:
    engine.close()


def build_store(builder: Callable[..., Any], dataset: Path, location: Path, mode: str, task: Task) -> Any:
    """Ingest a conversation file into a new store, reporting progress; cancellable."""
    return builder(Path(dataset), Path(location), mode=mode, progress=task.report, cancel=task.cancel_event)
