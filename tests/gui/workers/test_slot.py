"""TaskSlot: only the newest task of a kind reports; Cancel ends a task in `cancelled`."""
from __future__ import annotations

import threading
import time

import pytest

from core.errors import Cancelled, MemsenseError
from memsense_gui.workers.runner import TaskRunner
from memsense_gui.workers.slot import TaskSlot


@pytest.fixture
def runner(qtbot):
    r = TaskRunner("test-slot")
    yield r
    r.shutdown(wait=True)


def test_only_the_newest_task_reports(qtbot, runner):
    done, progress = [], []
    slot = TaskSlot(runner, succeeded=done.append, progressed=lambda d, t, w: progress.append(w))
    gate = threading.Event()

    def slow(value, task):
        task.report(0, 1, f"task {value}")
        gate.wait(5)
        return value  # the first one never checks for cancel: it finishes, unheard

    first = slot.start("first", slow, 1)
    second = slot.start("second", slow, 2)
    assert first.cancelled and not slot.is_current(first) and slot.is_current(second)
    gate.set()
    with qtbot.waitSignal(second.succeeded, timeout=5000):
        pass
    qtbot.waitUntil(lambda: first.done, timeout=5000)
    assert done == [2] and progress == ["task 2"]
    assert not slot.running


def test_cancel_ends_a_task_in_cancelled_not_failed(qtbot, runner):
    failed, cancelled = [], []
    slot = TaskSlot(runner, failed=failed.append, cancelled=cancelled.append)
    started = threading.Event()

    def work(task):
        started.set()
        while not task.cancelled:
            time.sleep(0.01)
        raise RuntimeError("stopped")  # however a cancelled task ends, it was cancelled

    slot.start("work", work)
    assert started.wait(5)
    slot.cancel()
    qtbot.waitUntil(lambda: bool(cancelled), timeout=5000)
    assert failed == [] and str(cancelled[0]) == "stopped"


def test_cancelled_raised_by_the_work_is_not_a_failure_but_other_errors_are(qtbot, runner):
    failed, cancelled = [], []
    slot = TaskSlot(runner, failed=failed.append, cancelled=cancelled.append)

    def stop(task):
        raise Cancelled("the store builder stopped")

    def broken(task):
        raise MemsenseError("the file is not a conversation file")

    with qtbot.waitSignal(slot.start("stop", stop).failed, timeout=5000):
        pass
    with qtbot.waitSignal(slot.start("broken", broken).failed, timeout=5000):
        pass
    assert [str(e) for e in cancelled] == ["the store builder stopped"]
    assert [str(e) for e in failed] == ["the file is not a conversation file"]
