"""The Auto-tune tab watches a study a `memsense tune --storage` worker process is filling (issue 38):
its trials show as they arrive, the best so far is the one-worker rule's, Apply best… applies it,
and the app runs no trial."""
from __future__ import annotations

import threading

import optuna
import pytest
from PySide6.QtCore import Qt

from core.evaluation.study_storage import open_storage, parse_storage
from memsense_gui.views.autotune import AutoTuneView
from tests.evaluation.test_shared_study_pg import _worker

pytestmark = pytest.mark.slow  # a worker process recalls the demo store and runs TRIALS trials
TRIALS = 80
"""Enough that the once-a-second watch sees the study part filled even on a loaded machine (30 could all land
between two of its reads)."""


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

        def grew() -> bool:
            if not counts or view.feed.count != counts[-1]:
                counts.append(view.feed.count)
            return bool(ended)
        qtbot.waitUntil(grew, timeout=300_000)
        assert worker.returncode == 0, ended[0][1]
        study = optuna.load_study(study_name="team", storage=open_storage(parse_storage(journal)))
        complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        qtbot.waitUntil(lambda: view.feed.count == len(complete), timeout=30_000)
        assert len([c for c in counts if 0 < c < len(complete)]) >= 2  # shown while the worker was running
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
