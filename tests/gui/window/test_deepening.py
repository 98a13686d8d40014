"""Deepening never runs on the UI thread in the real window: a pinned baseline and a compared
preset that need deeper route lists than the pool holds have it deepened on a worker, what is
shown meanwhile says it is updating, and the final figures are those of a fresh deep search."""
from __future__ import annotations

import threading
from dataclasses import replace

from core.config import Config
from core.rank.rerank import rerank
from memsense_gui.views.compare import ComparePanel
from tests.gui.fixtures import deepening_threads
from tests.recall.test_deepen import fresh

QUERY = "w3 w4 w5"
DEEP = replace(Config(), top_k=50)  # needs route lists deeper than the default settings' pool


def _window_on_a_shallow_pool(qtbot, make_window, scan_engine):
    w = make_window()
    w.ctx.presets.save("deep50", DEEP)
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.ctx.session.set_pool(scan_engine.recall("u", QUERY, Config().route_limit))
    assert w.ctx.session.ranking.pool.depth == Config().route_limit
    return w


def test_a_pinned_baseline_deepens_off_the_ui_thread_and_says_it_is_updating(qtbot, make_window, scan_engine,
                                                                              monkeypatch):
    w = _window_on_a_shallow_pool(qtbot, make_window, scan_engine)
    hold = threading.Event()
    threads = deepening_threads(monkeypatch, hold)
    w.baseline_bar.pin_preset("deep50")
    assert w.results.updating_label.isVisible() and "(updating…)" in w.baseline_bar.label.text()
    assert all(m == "" for m in (w.results.model.index(r, w.results.model.MOVED).data()  # no movement yet
                                 for r in range(w.results.model.rowCount())))
    with qtbot.waitSignal(w.ctx.session.pool_deepened, timeout=10_000):
        hold.set()
    assert threads and threading.main_thread() not in threads
    assert not w.results.updating_label.isVisible() and "(updating…)" not in w.baseline_bar.label.text()
    assert w.ctx.session.baseline.results == rerank(fresh(scan_engine, QUERY, DEEP.route_limit), DEEP).results


def test_comparing_a_preset_that_needs_deeper_lists_deepens_off_the_ui_thread(qtbot, make_window, scan_engine,
                                                                              monkeypatch):
    w = _window_on_a_shallow_pool(qtbot, make_window, scan_engine)
    panel = w.compare_panel
    hold = threading.Event()
    threads = deepening_threads(monkeypatch, hold)
    w.comparisons.compare("deep50", ComparePanel.CURRENT)
    assert not panel.view.isEnabled() and panel.summary.text().startswith("Updating")
    with qtbot.waitSignal(w.ctx.session.pool_deepened, timeout=10_000):
        hold.set()
    qtbot.waitUntil(panel.view.isEnabled, timeout=5_000)
    assert threads and threading.main_thread() not in threads
    assert panel.model.a.results == rerank(fresh(scan_engine, QUERY, DEEP.route_limit), DEEP).results
    assert panel.model.b.results == rerank(fresh(scan_engine, QUERY, Config().route_limit), Config()).results
    assert "results in common" in panel.summary.text()
