"""Auto-tune in the real window scores trials in worker processes (started by 'spawn' from the
task thread, never forked from the Qt process), and Cancel stops the search and its workers."""
from __future__ import annotations

import multiprocessing

from PySide6.QtCore import Qt

from core.evaluation import parallel
from memsense_gui.state import evaluation_source
from memsense_gui.views.dock import DockId
from tests.gui.fixtures import FakeEngine


def test_autotune_workers_start_and_stop_on_cancel(qtbot, evaluation_window, monkeypatch):
    monkeypatch.setattr(parallel, "MIN_SHARD_ROWS", 1)  # a small question set: workers anyway
    monkeypatch.setattr(evaluation_source, "default_jobs", lambda: 2)
    monkeypatch.setattr(FakeEngine, "USERS", ("synth-a", "synth-b", "synth-c"))
    window, view = evaluation_window("per_user")
    window.raise_dock(DockId.EVALUATION)  # in the Evaluate layout
    panel = view.autotune
    view.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(panel.folds_spin.isVisible, timeout=5_000)
    panel.trials_spin.setValue(5000)
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "fold 1" in panel.progress.format() and panel.progress.value() >= 3, timeout=60_000)
    assert len(multiprocessing.active_children()) == 2  # the trials are being scored by two workers
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.slot.running, timeout=60_000)
    qtbot.waitUntil(lambda: not multiprocessing.active_children(), timeout=10_000)
    assert "cancel" in panel.status.text().lower()
