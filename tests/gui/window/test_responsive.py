"""The event loop keeps ticking while recall, ingest and model loading run in workers."""
from __future__ import annotations

import threading

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QPushButton

from tests.gui.fixtures import fake_builder

DELAY = 0.6


class Ticker:
    """Counts QTimer ticks: it only advances while the GUI thread's event loop runs."""

    def __init__(self, interval_ms: int = 10):
        self.count = 0
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        self.count += 1

    def __enter__(self) -> "Ticker":
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.stop()


MIN_TICKS = 15  # a frozen loop gives 0-1; 0.6 s at 10 ms gives ~60 on an idle machine


def test_model_loading_does_not_freeze_the_window(qtbot, make_window):
    window = make_window(delay=DELAY, open_store=False)
    with Ticker() as ticks, qtbot.waitSignal(window.ctx.model_loaded, timeout=10_000):
        window.stores.open_store("fake-store")
    assert ticks.count >= MIN_TICKS
    assert threading.get_ident() not in window.engines[0].model_threads


def test_the_model_loads_while_the_engine_reads_the_user(qtbot, make_window):
    """Start-up: the user's chunks and a typed query do not queue behind the model load; the
    query's answer comes as soon as the model is ready."""
    window = make_window(open_store=False, model_delay=2.0)
    window.query_edit.setText("a query typed before the model is ready")
    with qtbot.waitSignal(window.ctx.chunks_loaded, timeout=10_000):
        window.stores.open_store("fake-store")
    assert not window.ctx.model_ready  # the chunks came first, while the model was still loading
    with qtbot.waitSignal(window.ctx.ranking_updated, timeout=10_000):
        window.queries.run_query()
    engine = window.engines[0]
    assert window.ctx.model_ready and engine.recalls
    assert engine.threads and engine.model_threads and not engine.threads & engine.model_threads
    assert threading.get_ident() not in engine.threads | engine.model_threads


def test_recall_does_not_freeze_the_window(qtbot, make_window):
    window = make_window(delay=DELAY)
    window.query_edit.setText("a slow query")
    with Ticker() as ticks, qtbot.waitSignal(window.ctx.ranking_updated, timeout=10_000):
        window.queries.run_query()
        assert window.ctx.session.ranking is None  # returned at once; recall runs on the worker
    assert ticks.count >= MIN_TICKS
    assert threading.get_ident() not in window.engines[0].threads


def test_ingest_does_not_freeze_the_window_and_reports_progress(qtbot, make_window, tmp_path):
    window = make_window(builder=fake_builder(delay=DELAY, steps=6))
    progress = []
    with Ticker() as ticks, qtbot.waitSignal(window.ctx.store_built, timeout=10_000):
        task = window.stores.build_store(tmp_path / "data.jsonl", tmp_path / "new-store", "turn", open_after=False)
        task.progressed.connect(lambda d, t, w: progress.append((d, t)))
    assert ticks.count >= MIN_TICKS
    assert progress and progress[-1][1] == 6
    assert (tmp_path / "new-store" / "meta.json").exists()


def test_ingest_can_be_cancelled(qtbot, make_window, tmp_path):
    window = make_window(builder=fake_builder(delay=3.0, steps=30))
    task = window.stores.build_store(tmp_path / "data.jsonl", tmp_path / "cancelled", open_after=False)
    qtbot.waitUntil(lambda: window.stores.progress is not None and window.stores.progress.maximum() == 30, timeout=5000)
    with qtbot.waitSignal(task.failed, timeout=5000), qtbot.assertNotEmitted(window.ctx.error_reported):
        button = window.stores.progress.findChild(QPushButton)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.stores.progress is None
    assert not (tmp_path / "cancelled").exists()
    assert "cancelled" in window.statusBar().currentMessage()


def test_the_newest_query_wins(qtbot, make_window):
    window = make_window(delay=0.3)
    shown = []
    window.ctx.ranking_updated.connect(lambda r: shown.append(r.pool.query))
    window.query_edit.setText("first question")
    window.queries.run_query()
    window.query_edit.setText("second question")
    window.queries.run_query()
    qtbot.waitUntil(lambda: shown == ["second question"], timeout=5000)
    qtbot.wait(400)
    assert shown == ["second question"]
