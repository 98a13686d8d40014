"""Only the newest task of a kind counts: start, cancel, progress, finish, fail, in one place.

Orange's `ConcurrentMixin` by composition: a view (or a window action) owns a `TaskSlot`
per kind of job and gives it its callbacks once. `start` cancels the slot's running task and
submits the new one; progress, the result and a failure reach the callbacks only while the
task is still the slot's current one, so a superseded task can never overwrite newer
results. A task that ends after it was cancelled (or raises `core.errors.Cancelled`) goes to
`cancelled`, not to `failed`.
"""
from __future__ import annotations

from typing import Any, Callable

from core.errors import Cancelled
from memsense_gui.workers.runner import Task, TaskRunner

Progressed = Callable[[int, int, str], Any]


class TaskSlot:
    """The current task of one kind of job, run by `runner`."""

    def __init__(self, runner: TaskRunner, *, succeeded: Callable[[Any], Any] | None = None,
                 failed: Callable[[BaseException], Any] | None = None,
                 cancelled: Callable[[BaseException], Any] | None = None,
                 progressed: Progressed | None = None):
        self.runner = runner
        self.task: Task | None = None
        self.why = ""  # why the current task was cancelled, when not by the user ("" else)
        self._token: object = None
        self._succeeded, self._failed, self._cancelled, self._progressed = succeeded, failed, cancelled, progressed

    def start(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Task:
        """Cancel the running task of this slot, then queue `fn(*args, task=task, **kwargs)`."""
        self.cancel()
        self.why = ""
        token = self._token = object()  # the callbacks hold this, not the task: no reference cycle
        task = self.runner.submit(
            name, fn, *args,
            progressed=lambda done, total, what: self._progress(token, done, total, what),
            succeeded=lambda result: self._finish(token, result),
            failed=lambda exc: self._fail(token, exc),
            **kwargs)
        self.task = task
        return task

    def is_current(self, task: Task | None) -> bool:
        """False for a task that a newer one of this slot replaced."""
        return task is not None and task is self.task

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done

    def cancel(self, why: str = "") -> None:
        """Ask the running task to stop; it ends through `cancelled` at its next check. `why`: the
        reason, when it is not the user's (the `cancelled` callback reads it as `why`)."""
        task = self.task
        if task is not None and not task.done:
            self.why = why
            task.cancel()

    def _progress(self, token: object, done: int, total: int, what: str) -> None:
        if token is self._token and self._progressed is not None:
            self._progressed(done, total, what)

    def _finish(self, token: object, result: Any) -> None:
        if token is self._token and self._succeeded is not None:
            self._succeeded(result)

    def _fail(self, token: object, exc: BaseException) -> None:
        if token is not self._token:
            return
        callback = self._cancelled if isinstance(exc, Cancelled) or (self.task is not None and self.task.cancelled) else self._failed
        if callback is not None:
            callback(exc)
