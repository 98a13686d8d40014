"""The Auto-tune tab watches a study a `memsense tune --storage` worker process is filling (issue 38):
its trials show as they arrive, the best so far is the one-worker rule's, Apply best… applies it,
and the app runs no trial."""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import optuna
import pytest
from PySide6.QtCore import Qt

from core.evaluation.study_storage import open_storage, parse_storage
from memsense_gui.views.autotune import AutoTuneView
from tests.evaluation.test_shared_study_pg import _worker

pytestmark = pytest.mark.slow  # a worker process recalls the demo store and runs TRIALS trials
TRIALS = 80
"""Enough that the worker is caught part-way twice (`_frozen_at`) before it ends."""


def _complete(journal: str) -> int:
    try:
        study = optuna.load_study(study_name="team", storage=open_storage(parse_storage(journal)))
    except KeyError:  # not made yet
        return 0
    return sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.get_trials(deepcopy=False))


def _until_stopped(pid: int) -> None:
    """Wait until the process is stopped (state T in /proc/PID/stat)."""
    stat = Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] in ("T", "t"):
            return
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not stop")


def _frozen_at(worker: subprocess.Popen, journal: str, at_least: int) -> int:
    """Freeze the worker (SIGSTOP) once it has finished `at_least` trials, never while it holds the
    journal's lock (the watch would wait for it, then break it as stale); how many it had finished.
    (Watching a free-running worker, a CI run once saw only one count between none and all 80.)"""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and worker.poll() is None:
        if _complete(journal) >= at_least:
            os.kill(worker.pid, signal.SIGSTOP)
            _until_stopped(worker.pid)  # a signal is delivered after kill returns: the lock is read once it is
            if not os.path.lexists(journal + ".lock"):
                return _complete(journal)  # a trial may have ended between the two reads
            os.kill(worker.pid, signal.SIGCONT)
        time.sleep(0.01)
    raise AssertionError(f"the worker ended before it was caught with {at_least} trials finished")


def test_the_tab_shows_a_running_studys_trials_as_they_arrive_and_applies_the_best(qtbot, tmp_path, demo_store,
                                                                                    model_cache):
    journal = str(tmp_path / "team.journal")
    worker = _worker(journal, demo_store, model_cache, "--trials", str(TRIALS))
    view = AutoTuneView()
    qtbot.addWidget(view)
    view.resize(1280, 720)
    view.show()
    counts: list[int] = []
    ended: list[tuple[str, str]] = []  # its report, read as it is written (a full pipe would stop it)
    reader = threading.Thread(target=lambda: ended.append(worker.communicate(timeout=300)), daemon=True)
    reader.start()
    try:
        qtbot.waitUntil(lambda: optuna.get_all_study_names(open_storage(parse_storage(journal))) != [],
                        timeout=120_000)
        view.watcher.attach(journal, "team")
        qtbot.waitUntil(lambda: view.watcher.watching, timeout=30_000)
        assert not view.run_button.isEnabled() and view.watch_button.text() == "Stop watching"

        for _ in range(2):  # twice, the worker frozen part-way: the tab catches up with what it finished so far
            counts.append(_frozen_at(worker, journal, (counts[-1] if counts else 0) + 1))
            try:
                qtbot.waitUntil(lambda: view.feed.count == counts[-1], timeout=30_000)
            finally:
                os.kill(worker.pid, signal.SIGCONT)
        qtbot.waitUntil(lambda: bool(ended), timeout=300_000)
        assert worker.returncode == 0, ended[0][1]
        study = optuna.load_study(study_name="team", storage=open_storage(parse_storage(journal)))
        complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        qtbot.waitUntil(lambda: view.feed.count == len(complete), timeout=30_000)
        assert 0 < counts[0] < counts[1] < len(complete)  # shown while the worker was running, as they arrived
        assert len({t.user_attrs["worker"] for t in study.trials}) == 1  # every trial is the worker's: none here
        rule = max(complete, key=lambda t: (t.user_attrs["train"], t.user_attrs["tiebreak"], -t.number))
        assert view.best_trial() is not None and view.best_trial().number == rule.number
        assert view.model.rowCount() == len(complete) and f"{len(complete)} complete trials of {TRIALS}" in view.status.text()
        assert view.apply_button.isEnabled()
        view.grab().save(str(tmp_path / "watch.png"))
        with qtbot.waitSignal(view.apply_requested, timeout=5_000) as applied:
            qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
        assert applied.args[0] == view.best_trial().config and f"trial {rule.number}" in applied.args[1]
        view.watcher.detach()
        assert view.run_button.isEnabled() and not view.watcher.watching
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(30)
        view.shutdown()
