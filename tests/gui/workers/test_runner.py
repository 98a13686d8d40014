"""Worker threads and the GUI thread: every Qt call, emission and connection teardown stays on
the GUI thread (memsense_gui/workers/runner.py says why: PySide6 frees a connection to a plain object's
bound method on whichever thread drops that object last, racing the GUI thread)."""
from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QObject, QTimer, Signal

from core.errors import Cancelled, MemsenseError
from memsense_gui.workers.runner import TaskRunner
from memsense_gui.workers.bridge import EngineBridge


class Plain:
    """A non-Qt receiver, like the concurrent Future the evaluation once connected to."""

    def __init__(self, log: list):
        self.log = log
        self.called = threading.Event()

    def got(self, *values) -> None:
        self.log.append(threading.get_ident())
        self.called.set()


class Busy(QObject):
    """Keeps the GUI thread doing what the window does between results: make short-lived
    senders, connect Python callables to them, emit, and destroy them (each of which updates
    PySide's table of connections to Python callables)."""

    pinged = Signal(object)

    def __init__(self):
        super().__init__()
        self.count = 0
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)
        self.timer.start(0)

    def _tick(self) -> None:
        for _ in range(16):
            sender = Busy.Sender()
            sender.pinged.connect(lambda payload: None)
            sender.pinged.connect(self._pong)
            sender.pinged.emit({"n": self.count})
            del sender

    def _pong(self, _payload) -> None:
        self.count += 1

    class Sender(QObject):
        pinged = Signal(object)


def _hold_until_called(receiver: Plain, task=None) -> None:
    """Worker body holding the receiver until the GUI thread has called it, then dropping it:
    the old evaluation bridge did this with a Future (and the app crashed in 3 of 4 runs)."""
    task.report(1, 2, "half")
    receiver.called.wait(5)


def test_slots_on_plain_objects_that_die_on_the_worker_do_not_crash(qtbot):
    runner = TaskRunner("test-plain")
    busy = Busy()
    log: list = []
    n = 2000
    for i in range(n):
        receiver = Plain(log)
        runner.submit("plain", _hold_until_called, receiver, progressed=receiver.got)
        del receiver  # the worker's reference may now be the last one
        if i % 100 == 0:
            qtbot.wait(1)
    qtbot.waitUntil(lambda: not runner.busy, timeout=60_000)
    runner.shutdown(wait=True)
    busy.timer.stop()
    assert len(log) == n  # every slot ran (a weakly held receiver would be dropped unseen)
    assert set(log) == {threading.get_ident()}  # on the GUI thread
    assert busy.count > 0


def _chatty(n: int, task=None):
    worker = threading.get_ident()
    for i in range(n):
        task.report(i, n, f"step {i}")
    return worker


def test_progress_and_results_arrive_on_the_gui_thread_in_order_latest_progress_kept(qtbot):
    runner = TaskRunner("test-order")
    events: list = []
    submitted = []
    for t in range(20):
        submitted.append(runner.submit(
            f"t{t}", _chatty, 2000,
            progressed=lambda d, total, what, t=t: events.append(("p", t, d, threading.get_ident())),
            succeeded=lambda worker, t=t: events.append(("ok", t, worker, threading.get_ident()))))
    qtbot.waitUntil(lambda: all(task.done for task in submitted), timeout=60_000)
    runner.shutdown(wait=True)
    gui = threading.get_ident()
    assert {e[3] for e in events} == {gui}
    finished = [e[1] for e in events if e[0] == "ok"]
    assert finished == list(range(20))  # submission order
    assert all(e[2] != gui for e in events if e[0] == "ok")  # the work ran on the runner's thread
    for t in range(20):
        steps = [e[2] for e in events if e[0] == "p" and e[1] == t]
        assert steps and steps == sorted(steps) and steps[-1] == 1999  # coalesced, never reordered
        assert events.index(("ok", t, *[e[2:] for e in events if e[0] == "ok" and e[1] == t][0])) > \
            max(i for i, e in enumerate(events) if e[0] == "p" and e[1] == t)
    assert sum(1 for e in events if e[0] == "p") < 20 * 2000  # not one GUI event per report


def test_a_worker_reporting_faster_than_its_slot_runs_does_not_hold_the_gui_thread(qtbot):
    """Each report's slot takes longer than the worker takes to send the next one (as Auto-tune's
    table refresh did with thousands of quick synthetic trials): the GUI thread still gets back to
    its event loop between drains, so a timer fires and stops the worker."""
    runner = TaskRunner("test-flood")
    stop, seen = threading.Event(), []

    def flood(task=None):
        n = 0
        while not stop.is_set() and n < 200_000:
            n += 1
            task.report(n, 0, "")
        return n

    def slow_slot(done, total, what):
        seen.append(done)
        time.sleep(0.002)

    task = runner.submit("flood", flood, progressed=slow_slot)
    qtbot.waitUntil(lambda: len(seen) >= 3, timeout=10_000)
    QTimer.singleShot(0, stop.set)
    with qtbot.waitSignal(task.succeeded, timeout=10_000) as blocker:
        pass
    assert blocker.args[0] < 200_000  # stopped by the timer, not by running out of reports
    runner.shutdown(wait=True)


def test_a_failure_carries_its_traceback_to_the_gui_thread(qtbot):
    runner = TaskRunner("test-fail")

    def boom(task=None):
        raise MemsenseError("bad input")

    task = runner.submit("boom", boom)
    with qtbot.waitSignal(task.failed, timeout=5000) as blocker:
        pass
    exc = blocker.args[0]
    assert isinstance(exc, MemsenseError) and "bad input" in exc.traceback_text
    runner.shutdown(wait=True)


def test_the_engine_bridge_runs_calls_on_the_runner_thread_without_the_gui_thread():
    """No event loop runs here: the bridge must not need the GUI thread at all."""
    runner = TaskRunner("test-bridge")
    bridge = EngineBridge(runner)
    results: list = []

    def worker():
        for i in range(500):
            results.append(bridge.call(lambda x: (x, threading.get_ident()), i))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    assert [r[0] for r in results] == list(range(500))
    assert len({r[1] for r in results}) == 1 and results[0][1] not in (thread.ident, threading.get_ident())
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        bridge.call(time.sleep, 0.5, cancel=cancel)
    runner.shutdown(wait=True)
    with pytest.raises(MemsenseError, match="engine is closed"):
        bridge.call(len, "x")
