"""Deepening never runs on the UI thread in the real window: a pinned baseline, a compared
preset and "why not" on a chunk no route found within route_limit, each needing deeper route
lists than the pool holds, have it deepened on a worker; what is shown meanwhile says it is
updating, and the final figures are those of a synchronous deepening or a fresh deep search."""
from __future__ import annotations

import threading
from dataclasses import replace

from core.config import Config
from core.rank.rerank import rerank
from core.recall.pool import deepest
from memsense_gui.models.pins import PinsModel
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.state.session import UPDATING
from memsense_gui.views.compare import ComparePanel
from tests.gui.fixtures import deepening_threads
from tests.recall.test_deepen import fresh
from memsense_gui.views.dock import DockId

QUERY = "w3 w4 w5"
DEEP = replace(Config(), top_k=50)  # needs route lists deeper than the default settings' pool


def _window_on_a_shallow_pool(qtbot, make_window, scan_engine, monkeypatch):
    """The window on a pool recalled for the default settings; every deepening from then on
    waits for `hold` (returned with the threads that deepened)."""
    w = make_window()
    w.ctx.presets.save("deep50", DEEP)
    pool = scan_engine.recall("u", QUERY, Config().route_limit)
    hold = threading.Event()
    threads = deepening_threads(monkeypatch, hold)
    with qtbot.waitSignal(w.ctx.ranking_updated, timeout=10_000):
        w.ctx.session.set_pool(pool)
    assert w.ctx.session.ranking.pool.depth == Config().route_limit
    return w, hold, threads


def _deepened_off_the_ui_thread(threads) -> bool:
    return bool(threads) and threading.main_thread() not in threads


def test_a_pinned_baseline_deepens_off_the_ui_thread_and_says_it_is_updating(qtbot, make_window, scan_engine,
                                                                              monkeypatch):
    w, hold, threads = _window_on_a_shallow_pool(qtbot, make_window, scan_engine, monkeypatch)
    w.baseline_bar.pin_preset("deep50")
    assert w.results.updating_label.isVisible() and "(updating…)" in w.baseline_bar.label.text()
    moved = w.results.model.MOVED
    assert all(w.results.model.index(r, moved).data() == "" for r in range(w.results.model.rowCount()))  # none yet
    with qtbot.waitSignal(w.ctx.session.pool_deepened, timeout=10_000):
        hold.set()
    qtbot.waitUntil(lambda: w.ctx.session.baseline is not None, timeout=10_000)
    assert _deepened_off_the_ui_thread(threads)
    assert not w.results.updating_label.isVisible() and "(updating…)" not in w.baseline_bar.label.text()
    assert w.ctx.session.baseline.results == rerank(fresh(scan_engine, QUERY, DEEP.route_limit), DEEP).results


def test_comparing_a_preset_that_needs_deeper_lists_deepens_off_the_ui_thread(qtbot, make_window, scan_engine,
                                                                              monkeypatch):
    w, hold, threads = _window_on_a_shallow_pool(qtbot, make_window, scan_engine, monkeypatch)
    panel = w.compare_panel
    w.comparisons.compare("deep50", ComparePanel.CURRENT)
    assert not panel.view.isEnabled() and panel.summary.text().startswith("Updating")
    hold.set()
    qtbot.waitUntil(panel.view.isEnabled, timeout=10_000)
    assert _deepened_off_the_ui_thread(threads)
    assert panel.model.a.results == rerank(fresh(scan_engine, QUERY, DEEP.route_limit), DEEP).results
    assert panel.model.b.results == rerank(fresh(scan_engine, QUERY, Config().route_limit), Config()).results
    assert "results in common" in panel.summary.text()


def test_why_not_on_a_chunk_beyond_route_limit_deepens_off_the_ui_thread(qtbot, make_window, scan_engine, monkeypatch):
    w, hold, threads = _window_on_a_shallow_pool(qtbot, make_window, scan_engine, monkeypatch)
    shallow = w.ctx.session.ranking.pool
    target = next(c.memory_id for c in scan_engine.chunks("u") if shallow.index_of(c.memory_id) is None)
    w.raise_dock(DockId.WHY_NOT)
    w.ctx.session.pin(target)
    status = lambda: w.whynot_panel.pins_model.index(0, PinsModel.STATUS).data(RAW_ROLE)  # noqa: E731
    qtbot.waitUntil(lambda: status() is not None, timeout=5_000)
    assert status() == UPDATING
    hold.set()
    qtbot.waitUntil(lambda: status() != UPDATING, timeout=10_000)
    assert _deepened_off_the_ui_thread(threads)
    # the reference: the same query's fate with its deepest lists ranked here and now
    pool = scan_engine.recall("u", QUERY, Config().route_limit)
    expected = rerank(pool, Config()).fate(target, deepest(pool))
    assert expected.status in ("beyond_route_limit", "zero_weight", "absent")
    reason = w.whynot_panel.pins_model.index(0, PinsModel.REASON).data()
    assert (status(), reason) == (expected.status, expected.reason)
