"""The one task runner: slow work off the GUI thread (Orange's task pattern).

The work itself is module-level functions (`workers.jobs`) that take their inputs plus the
task (a progress callback and a cancel token) and return a result object; widgets only
start, cancel and receive. `TaskRunner` runs them on one dedicated thread, in submission
order, so one engine is never used from two threads at once; results come back as queued
signals. `workers.slot.TaskSlot` adds "only the newest task of a kind counts".
"""
from __future__ import annotations

import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from core.errors import Cancelled


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

    def check(self) -> None:
        """Raise `Cancelled` when the task was cancelled (work functions call it between steps)."""
        if self.cancelled:
            raise Cancelled(f"{self.name} cancelled")


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
        task.check()
        result = fn(*args, task=task, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the GUI
        exc.traceback_text = traceback.format_exc()  # type: ignore[attr-defined]
        runner._finished.emit(key, False, exc)
    else:
        runner._finished.emit(key, True, result)
