"""Engine calls from a worker thread, run on the engine thread one at a time.

The Evaluation view's worker needs the store's engine, which only the engine runner's thread
may use: the call is queued to the GUI thread, which submits it to the engine runner; the
worker waits on a future (checking its cancel token) while the GUI stays responsive.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, Signal

from core.errors import Cancelled, MemsenseError
from memsense_gui.workers.runner import Task, TaskRunner


class EngineBridge(QObject):
    """`call(fn, *args)` from any worker thread runs `fn(*args)` on `runner`'s thread."""

    _requested = Signal(object)

    def __init__(self, runner: TaskRunner, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self._requested.connect(self._submit, Qt.ConnectionType.QueuedConnection)

    def call(self, fn: Callable[..., Any], *args: Any, cancel: threading.Event | None = None) -> Any:
        item: dict[str, Any] = {"fn": fn, "args": args, "future": Future(), "task": None}
        self._requested.emit(item)
        future: Future = item["future"]
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled("evaluation cancelled")
            task = item["task"]
            if task is not None and task.cancelled and not future.done():
                raise MemsenseError("the store was closed during the evaluation")
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                continue

    def _submit(self, item: dict[str, Any]) -> None:
        future: Future = item["future"]
        try:
            item["task"] = self.runner.submit("evaluation recall", _call, item["fn"], item["args"],
                                              succeeded=future.set_result, failed=future.set_exception)
        except RuntimeError as exc:  # the runner was shut down (window closing)
            future.set_exception(MemsenseError(f"the engine is closed ({exc})"))


def _call(fn: Callable[..., Any], args: tuple, task: Task | None = None) -> Any:
    return fn(*args)
