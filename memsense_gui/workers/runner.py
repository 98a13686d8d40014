"""The one task runner: slow work off the GUI thread (Orange's task pattern).

The work itself is module-level functions (`workers.jobs`) that take their inputs plus the
running job (a progress callback and a cancel token) and return a result object; widgets only
start, cancel and receive. `TaskRunner` runs them on one dedicated thread, in submission
order, so one engine is never used from two threads at once. `workers.slot.TaskSlot` adds
"only the newest task of a kind counts".

Worker threads never touch Qt. A worker sees only a plain `Job` (cancel token, progress
callback); progress and results go into a locked mailbox, and one wake-up byte on a socket
pair makes a `QSocketNotifier` on the GUI thread drain it (the self-pipe of asyncio's
`call_soon_threadsafe`). Every Qt object and signal connection is made, emitted and dropped on
the GUI thread. Why: PySide6 keeps one global table, with no lock, of the connections to
Python callables (libpyside dynamicslot.cpp). It is edited on connect, when a sender is
destroyed, and from a weakref callback when the object of a connected bound method dies, on
whichever thread drops it last. The evaluation once dropped such objects (Futures) on a worker
thread: the worker and the GUI thread freed the same connection ("double free or
corruption", a segfault in 3 of 4 LoCoMo evaluations); tools/pyside_connection_race.py
reproduces the race without the app.
"""
from __future__ import annotations

import inspect
import socket
import threading
import traceback
import weakref
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier, Signal

from core.errors import Cancelled

_PROGRESS, _FINISHED = 0, 1


class _Mailbox:
    """Worker threads -> GUI thread with no Qt call on the worker: a locked FIFO of messages and
    at most one pending wake-up byte; the GUI thread's socket notifier drains the FIFO."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: deque[tuple] = deque()
        self._queued_progress: dict[tuple[int, int], int] = {}  # (runner id, task key) -> reports queued
        self._posted = self._taken = 0  # messages queued and taken off the queue so far
        self._wake_pending = False
        self._recv, self._send = socket.socketpair()
        self._recv.setblocking(False)
        self._send.setblocking(False)
        self._runners: weakref.WeakValueDictionary[int, TaskRunner] = weakref.WeakValueDictionary()
        self.notifier = QSocketNotifier(self._recv.fileno(), QSocketNotifier.Type.Read, QCoreApplication.instance())
        self.notifier.activated.connect(self._drain)

    def post(self, message: tuple) -> None:
        """Any thread: queue `(runner id, task key, kind, payload)` for the GUI thread."""
        with self._lock:
            self._messages.append(message)
            self._posted += 1
            if message[2] == _PROGRESS:
                self._queued_progress[message[:2]] = self._queued_progress.get(message[:2], 0) + 1
            wake, self._wake_pending = not self._wake_pending, True
        if wake:
            try:
                self._send.send(b"\0")
            except OSError:  # the buffer cannot be full (one byte per drain); closed at exit
                pass

    def _next(self) -> tuple | None:
        """The oldest message still worth delivering (a report with a newer one queued is not)."""
        with self._lock:
            while self._messages:
                message = self._messages.popleft()
                self._taken += 1
                if message[2] != _PROGRESS:
                    return message
                left = self._queued_progress.pop(message[:2]) - 1
                if not left:
                    return message
                self._queued_progress[message[:2]] = left
            return None

    def _drain(self, *_: Any) -> None:
        """GUI thread: deliver the queued messages one at a time, oldest first. A slot may run a
        nested event loop (a modal progress dialog does) that drains too: order still holds.
        One drain ends once it has taken off the queue every message posted before it began: a
        message posted meanwhile has woken the next drain, so a worker that reports faster than
        its slots run cannot keep the GUI thread here (events, timers and input run in between)."""
        try:
            while self._recv.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        with self._lock:
            self._wake_pending = False
            end = self._posted
        while self._taken < end and (message := self._next()) is not None:
            runner_id, key, kind, payload = message
            runner = self._runners.get(runner_id)
            if runner is None:
                continue
            if kind == _PROGRESS:
                runner._relay_progress(key, *payload)
            else:
                runner._relay_finish(key, *payload)
        # the messages (results, exceptions) are dropped here, on the GUI thread


_mailbox: _Mailbox | None = None


def mailbox() -> _Mailbox:
    """The process's mailbox, made on first use (on the GUI thread, by the first TaskRunner)."""
    global _mailbox
    if _mailbox is None:
        _mailbox = _Mailbox()
    return _mailbox


class Job:
    """What the worker thread gets of a task: its name, cancel token and progress callback.
    Plain Python: the worker holds no Qt object, so nothing Qt is used or freed on it."""

    __slots__ = ("name", "cancel_event", "_box", "_address")

    def __init__(self, name: str, cancel_event: threading.Event, box: _Mailbox, address: tuple[int, int]):
        self.name = name
        self.cancel_event = cancel_event
        self._box = box
        self._address = address

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def check(self) -> None:
        """Raise `Cancelled` when the task was cancelled (work functions call it between steps)."""
        if self.cancelled:
            raise Cancelled(f"{self.name} cancelled")

    def report(self, done: int, total: int, what: str = "") -> None:
        """Progress callback for the worker thread; delivered to the GUI thread (latest wins)."""
        self._box.post((*self._address, _PROGRESS, (int(done), int(total), str(what))))

    def finish(self, ok: bool, payload: Any) -> None:
        self._box.post((*self._address, _FINISHED, (ok, payload)))


class Task(QObject):
    """One submitted job, living on the GUI thread: `progressed`, then `succeeded` or `failed`.

    Only the GUI thread holds it (the worker gets a `Job`), so it is used and destroyed there.
    """

    progressed = Signal(int, int, str)  # done, total, what
    succeeded = Signal(object)  # the function's return value
    failed = Signal(object)  # the exception (with `.traceback_text` attached)

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.cancel_event = threading.Event()
        self.done = False

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()


class TaskRunner(QObject):
    """Runs tasks one at a time on its own thread, in submission order."""

    task_started = Signal(object)  # Task
    task_done = Signal(object)  # Task (after succeeded/failed)

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._live: dict[int, Task] = {}
        self._mailbox = mailbox()
        self._mailbox._runners[id(self)] = self
        self.destroyed.connect(_forget(self._mailbox, id(self)))

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
        """Queue `fn(*args, task=job, **kwargs)`; the callbacks are connected before it starts."""
        task = Task(name)
        for signal, slot in ((task.succeeded, succeeded), (task.failed, failed), (task.progressed, progressed)):
            if slot is not None:
                signal.connect(_held(slot))
        job = Job(name, task.cancel_event, self._mailbox, (id(self), id(task)))
        self._executor.submit(_run, job, fn, args, kwargs)
        self._live[id(task)] = task
        self.task_started.emit(task)
        return task

    @property
    def executor(self) -> ThreadPoolExecutor:
        """This runner's thread, for plain calls from other worker threads (`executor.submit(fn, *args)`
        runs in order with the tasks, without the GUI thread; RuntimeError once shut down)."""
        return self._executor

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


def _held(slot: Callable[..., Any]) -> Callable[..., Any]:
    """A bound method of a plain object (a Future, say) is connected through a closure that holds
    it: PySide then never watches that object with a weakref, whose callback would tear the
    connection down on whichever thread drops the object last. QObject methods stay as they are
    (PySide disconnects them when the receiver is destroyed, and `sender()` works in them)."""
    if inspect.ismethod(slot) and not isinstance(slot.__self__, QObject):
        return lambda *args: slot(*args)
    return slot


def _forget(box: _Mailbox, runner_id: int) -> Callable[..., None]:
    def forget(*_: Any) -> None:
        box._runners.pop(runner_id, None)

    return forget


def _run(job: Job, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    try:
        job.check()
        result = fn(*args, task=job, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the GUI
        exc.traceback_text = traceback.format_exc()  # type: ignore[attr-defined]
        job.finish(False, exc)
    else:
        job.finish(True, result)
