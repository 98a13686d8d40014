"""Engine calls from a worker thread, run on the engine thread one at a time.

The Evaluation view's worker needs the store's engine, which only the engine runner's thread
may use. The call goes straight to that runner's executor, in order with the window's own
engine work, and the worker waits on the future (checking its cancel token): no GUI thread
and no Qt object on the way (workers.runner says why that matters).
"""
from __future__ import annotations

import threading
from concurrent.futures import CancelledError
from typing import Any, Callable

from core.errors import Cancelled, MemsenseError
from memsense_gui.workers.runner import TaskRunner


class EngineBridge:
    """`call(fn, *args)` from any worker thread runs `fn(*args)` on `runner`'s thread."""

    def __init__(self, runner: TaskRunner):
        self._submit = runner.executor.submit  # taken on the GUI thread; thread-safe to call

    def call(self, fn: Callable[..., Any], *args: Any, cancel: threading.Event | None = None) -> Any:
        try:
            future = self._submit(fn, *args)
        except RuntimeError as exc:  # the runner was shut down (window closing)
            raise MemsenseError(f"the engine is closed ({exc})") from None
        while True:
            if cancel is not None and cancel.is_set():
                future.cancel()
                raise Cancelled("evaluation cancelled")
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                continue
            except CancelledError:
                raise MemsenseError("the store was closed during the evaluation") from None
