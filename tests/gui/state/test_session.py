"""QuerySession: recall once, re-rank many under the current settings (`CurrentSettings`: throttled,
newest request wins); movement baseline."""
from __future__ import annotations

import threading
from dataclasses import replace

from core.config import Config
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from memsense_gui.state.current_settings import CurrentSettings
from memsense_gui.state.session import QuerySession
from tests.gui.fixtures import deepening_threads
from tests.recall.test_deepen import fresh


def _session(config: Config | None = None, throttle_ms: int = 30) -> QuerySession:
    return QuerySession(CurrentSettings(config, throttle_ms))


def _set(s: QuerySession, cfg: Config, knob: str | None = None) -> None:
    """A knob edited and its change emitted at once (settings applied whole without a knob)."""
    if knob is None:
        s.settings.apply(cfg, "test settings")
    else:
        s.settings.edit(cfg, knob)
        s.settings.flush()


def test_set_pool_reranks_at_once(qtbot):
    s = _session()
    pool = synthetic_pool(seed=1)
    with qtbot.waitSignal(s.ranking_changed) as blocker:
        s.set_pool(pool)
    assert blocker.args[0].result_ids == rerank(pool, Config()).result_ids
    assert s.baseline is None


def test_a_burst_of_requests_is_throttled_and_the_newest_wins(qtbot):
    s = _session(throttle_ms=40)
    s.set_pool(synthetic_pool(seed=2))
    seen = []
    s.ranking_changed.connect(lambda r: seen.append(r.config.mmr_lambda))
    values = [round(0.3 + 0.01 * i, 2) for i in range(30)]
    for v in values:
        s.settings.edit(replace(Config(), mmr_lambda=v), "mmr_lambda")
    qtbot.waitUntil(lambda: bool(seen) and seen[-1] == values[-1], timeout=2000)
    assert len(seen) < len(values)
    assert s.settings.config.mmr_lambda == values[-1]


def test_movement_baseline_spans_one_gesture(qtbot):
    s = _session(throttle_ms=0)
    pool = synthetic_pool(seed=4)
    s.set_pool(pool)
    first = s.ranking
    _set(s, replace(Config(), mmr_lambda=0.7), "mmr_lambda")
    _set(s, replace(Config(), mmr_lambda=0.6), "mmr_lambda")
    assert s.baseline is first  # same knob, same gesture
    second = s.ranking
    _set(s, replace(Config(), mmr_lambda=0.6, alpha=0.2), "alpha")
    assert s.baseline is second  # another knob starts a new gesture


def test_a_second_drag_of_one_knob_shows_movement_since_the_first(qtbot):
    """A drag released (or a value entered) ends the gesture however soon the next one starts;
    its last change, still waiting in the throttle, is applied first, so it is the baseline."""
    s = _session(throttle_ms=10_000)
    s.set_pool(synthetic_pool(seed=4))
    _set(s, replace(Config(), mmr_lambda=0.7), "mmr_lambda")
    s.settings.edit(replace(Config(), mmr_lambda=0.6), "mmr_lambda")  # held by the throttle
    s.settings.end_edit()
    released = s.ranking
    assert released.config.mmr_lambda == 0.6
    _set(s, replace(Config(), mmr_lambda=0.4), "mmr_lambda")
    assert s.baseline is released


def test_previous_rank_and_pins(qtbot):
    s = _session()
    s.set_pool(synthetic_pool(seed=5))
    before = s.ranking.result_ids
    _set(s, replace(Config(), mmr_lambda=1.0), "mmr_lambda")
    for mid in s.ranking.result_ids:
        assert s.previous_rank(mid) == (before.index(mid) + 1 if mid in before else None)
    with qtbot.waitSignal(s.pins_changed):
        s.pin(before[0])
    s.pin(before[0])
    assert s.pins == (before[0],)
    s.unpin(before[0])
    assert s.pins == ()


def test_a_failing_rerank_is_reported(qtbot):
    s = _session()
    s.set_pool(synthetic_pool(seed=6))
    bad = replace(Config(), top_k=5)
    object.__setattr__(bad, "scheme", "no-such-scheme")  # bypass validation: a scheme the core lacks
    with qtbot.waitSignal(s.rerank_failed):
        _set(s, bad)


def test_a_knob_that_needs_deeper_lists_deepens_the_pool_off_the_ui_thread(qtbot, scan_engine, monkeypatch):
    """A pool recalled for top_k 4 and moved to top_k 50: the deeper ranking comes from a worker
    thread, equals a fresh search at that depth, and the newest settings win meanwhile."""
    s = _session(throttle_ms=0)
    s.set_pool(scan_engine.recall("u", "w3 w4 w5", Config().route_limit))
    hold = threading.Event()
    threads = deepening_threads(monkeypatch, hold)
    assert s.ranking.pool.depth == Config().route_limit
    deep = replace(Config(), top_k=50)
    with qtbot.waitSignal(s.ranking_changed, timeout=10000) as blocker:
        _set(s, deep, "top_k")
        assert s.is_deepening and s.is_updating and s.ranking.config.top_k == 4  # the old ranking stays meanwhile
        _set(s, replace(deep, mmr_lambda=0.5), "mmr_lambda")  # a newer tick while it deepens
        hold.set()
    assert not s.is_deepening and not s.is_updating
    assert threads and threading.main_thread() not in threads
    got = blocker.args[0]
    assert got.config.mmr_lambda == 0.5 and got.pool.depth == deep.route_limit
    assert got.results == rerank(fresh(scan_engine, "w3 w4 w5", deep.route_limit), got.config).results
    _set(s, Config(), "top_k")  # back down: the cached shallower pool, at once
    assert not s.is_deepening and s.ranking.pool.depth == Config().route_limit


def test_the_deeper_pool_is_re_ranked_on_the_runner_under_the_settings_that_waited(qtbot, scan_engine, monkeypatch):
    """Re-ranking lists thousands deep takes as long as ranking them: the deepening job re-ranks
    the deeper pool under the settings that waited for it, and the UI thread shows that ranking
    (equal to its own re-rank) without re-ranking it; settings that came later are re-ranked here."""
    import memsense_gui.state.session as session_module
    import memsense_gui.workers.jobs as jobs_module

    made: list[tuple[bool, Config]] = []

    def recorded(real):
        def rerank_here(pool, cfg):
            made.append((threading.current_thread() is threading.main_thread(), cfg))
            return real(pool, cfg)
        return rerank_here

    monkeypatch.setattr(session_module, "rerank", recorded(session_module.rerank))
    monkeypatch.setattr(jobs_module, "rerank", recorded(jobs_module.rerank))
    s = _session(throttle_ms=0)
    s.set_pool(scan_engine.recall("u", "w3 w4 w5", Config().route_limit))
    deep = replace(Config(), top_k=50)
    made.clear()
    with qtbot.waitSignal(s.ranking_changed, timeout=10000) as blocker:
        _set(s, deep, "top_k")
    assert made == [(False, deep)]  # on the runner only
    assert blocker.args[0].config == deep
    assert blocker.args[0].results == rerank(fresh(scan_engine, "w3 w4 w5", deep.route_limit), deep).results
    made.clear()
    _set(s, replace(deep, mmr_lambda=0.5), "mmr_lambda")  # the pool serves it now: a re-rank here, as before
    assert made == [(True, replace(deep, mmr_lambda=0.5))] and s.ranking.config.mmr_lambda == 0.5


def test_a_long_re_rank_runs_on_the_runner_and_the_newest_settings_win(qtbot, scan_engine, monkeypatch):
    """Settings that may read HEAVY_RERANK_ROWS candidates are re-ranked on the runner: the ranking
    on screen stays, marked updating; ticks meanwhile wait; each ranking done is shown (a drag
    stays live) and the newest settings are ranked next; a re-rank that fails there is reported, once."""
    import memsense_gui.state.session as session_module
    import memsense_gui.workers.jobs as jobs_module

    made: list[tuple[bool, float]] = []
    real = jobs_module.rerank
    hold = threading.Event()

    def on_the_runner(pool, cfg):
        made.append((threading.current_thread() is threading.main_thread(), cfg.mmr_lambda))
        hold.wait(30)
        return real(pool, cfg)

    monkeypatch.setattr(jobs_module, "rerank", on_the_runner)
    monkeypatch.setattr(session_module, "HEAVY_RERANK_ROWS", 10)  # the scan engine's pools are small
    s = _session(throttle_ms=0)
    hold.set()
    with qtbot.waitSignal(s.ranking_changed, timeout=10000):
        s.set_pool(scan_engine.recall("u", "w3 w4 w5", Config().route_limit))
    assert made == [(False, Config().mmr_lambda)] and not s.is_updating
    shown = s.ranking
    hold.clear()
    made.clear()
    _set(s, replace(Config(), mmr_lambda=0.5), "mmr_lambda")
    assert s.is_updating and s.ranking is shown  # what is on screen stays meanwhile
    _set(s, replace(Config(), mmr_lambda=0.6), "mmr_lambda")
    _set(s, replace(Config(), mmr_lambda=0.7), "mmr_lambda")
    with qtbot.waitSignal(s.ranking_changed, timeout=10000) as first:
        hold.set()
    qtbot.waitUntil(lambda: not s.is_updating, timeout=10000)
    assert first.args[0].config.mmr_lambda == 0.5 and s.ranking.config.mmr_lambda == 0.7
    assert made == [(False, 0.5), (False, 0.7)]  # 0.6 was never ranked: the newest won
    fresh_pool = scan_engine.recall("u", "w3 w4 w5", Config().route_limit)
    assert s.ranking.results == rerank(fresh_pool, replace(Config(), mmr_lambda=0.7)).results

    bad = replace(Config(), mmr_lambda=0.8)
    object.__setattr__(bad, "scheme", "no-such-scheme")  # bypass validation: a scheme the core lacks
    failures: list[object] = []
    s.rerank_failed.connect(failures.append)
    _set(s, bad)
    qtbot.waitUntil(lambda: bool(failures) and not s.pools.is_ranking, timeout=10000)
    qtbot.wait(50)
    assert len(failures) == 1 and s.ranking.config.mmr_lambda == 0.7  # reported once; the last ranking stays


def test_a_pinned_baseline_that_needs_deeper_lists_is_ranked_off_the_ui_thread(qtbot, scan_engine, monkeypatch):
    """A baseline pinned with top_k 50 on a pool recalled for top_k 4, and kept for the next
    query: the results come at once, the baseline once a worker deepened the pool (no movement
    is shown meanwhile), and it equals the baseline ranked on a fresh search that deep."""
    deep = replace(Config(), top_k=50)
    s = _session(throttle_ms=0)
    s.set_pool(scan_engine.recall("u", "w3 w4 w5", Config().route_limit))
    shown, hold = s.ranking, threading.Event()
    threads = deepening_threads(monkeypatch, hold)
    with qtbot.waitSignal(s.pool_deepened, timeout=10000):
        s.pin_baseline("deep", deep)
        assert s.is_updating and s.baseline is None and s.previous_rank(shown.result_ids[0]) is None
        hold.set()
    assert not s.is_updating and threads and threading.main_thread() not in threads
    assert s.baseline.results == rerank(fresh(scan_engine, "w3 w4 w5", deep.route_limit), deep).results

    pool = scan_engine.recall("u", "w7 w8", Config().route_limit)  # a new query: the same baseline
    hold.clear()
    threads.clear()
    with qtbot.waitSignal(s.pool_deepened, timeout=10000):
        s.set_pool(pool)
        assert s.ranking is not None and s.ranking.config == Config()  # the results at once
        assert s.is_updating and s.baseline is None
        hold.set()
    assert not s.is_updating and threads and threading.main_thread() not in threads
    assert s.baseline.results == rerank(fresh(scan_engine, "w7 w8", deep.route_limit), deep).results
    assert s.ranking.results == rerank(fresh(scan_engine, "w7 w8", Config().route_limit), Config()).results


def test_a_new_query_while_the_last_pool_deepens_gets_its_own_worker(qtbot, scan_engine, monkeypatch):
    """The last pool's worker finishing first does not end the new pool's deepening."""
    from core.recall.deepen import ScanPools

    deep = replace(Config(), top_k=50)
    s = _session(deep, throttle_ms=0)
    first = scan_engine.recall("u", "w3 w4 w5", Config().route_limit)
    second = scan_engine.recall("u", "w7 w8", Config().route_limit)
    gates = {"w3 w4 w5": threading.Event(), "w7 w8": threading.Event()}
    rank = ScanPools._rank
    monkeypatch.setattr(ScanPools, "_rank", lambda self, depth: gates[self.query].wait(30) and rank(self, depth))
    s.set_pool(first)
    s.set_pool(second)  # a new query while the first pool still deepens
    assert s.is_deepening and s.is_updating and s.ranking is None
    with qtbot.waitSignal(s.pools.runner.task_done, timeout=10000):  # the first pool's deepening ends
        gates["w3 w4 w5"].set()
    assert s.is_deepening and s.is_updating and s.ranking is None  # the second still deepens
    with qtbot.waitSignal(s.ranking_changed, timeout=10000) as blocker:
        gates["w7 w8"].set()
    assert not s.is_deepening and not s.is_updating and blocker.args[0].pool.query == "w7 w8"
    assert s.ranking.results == rerank(fresh(scan_engine, "w7 w8", deep.route_limit), deep).results
