"""QuerySession: recall once, re-rank many; throttled, newest request wins; movement baseline."""
from __future__ import annotations

from dataclasses import replace

from core.config import Config
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from memsense_gui.state.session import QuerySession


def test_set_pool_reranks_at_once(qtbot):
    s = QuerySession()
    pool = synthetic_pool(seed=1)
    with qtbot.waitSignal(s.ranking_changed) as blocker:
        s.set_pool(pool)
    assert blocker.args[0].result_ids == rerank(pool, Config()).result_ids
    assert s.baseline is None


def test_a_burst_of_requests_is_throttled_and_the_newest_wins(qtbot):
    s = QuerySession(throttle_ms=40)
    s.set_pool(synthetic_pool(seed=2))
    seen = []
    s.ranking_changed.connect(lambda r: seen.append(r.config.mmr_lambda))
    values = [round(0.3 + 0.01 * i, 2) for i in range(30)]
    for v in values:
        s.request_config(replace(Config(), mmr_lambda=v), "mmr_lambda")
    qtbot.waitUntil(lambda: bool(seen) and seen[-1] == values[-1], timeout=2000)
    assert len(seen) < len(values)
    assert s.config.mmr_lambda == values[-1]


def test_movement_baseline_spans_one_gesture(qtbot):
    s = QuerySession(throttle_ms=0)
    pool = synthetic_pool(seed=4)
    s.set_pool(pool)
    first = s.ranking
    s.set_config(replace(Config(), mmr_lambda=0.7), "mmr_lambda")
    s.set_config(replace(Config(), mmr_lambda=0.6), "mmr_lambda")
    assert s.baseline is first  # same knob, same gesture
    second = s.ranking
    s.set_config(replace(Config(), mmr_lambda=0.6, alpha=0.2), "alpha")
    assert s.baseline is second  # another knob starts a new gesture


def test_previous_rank_and_pins(qtbot):
    s = QuerySession()
    s.set_pool(synthetic_pool(seed=5))
    before = s.ranking.result_ids
    s.set_config(replace(Config(), mmr_lambda=1.0), "mmr_lambda")
    for mid in s.ranking.result_ids:
        assert s.previous_rank(mid) == (before.index(mid) + 1 if mid in before else None)
    with qtbot.waitSignal(s.pins_changed):
        s.pin(before[0])
    s.pin(before[0])
    assert s.pins == (before[0],)
    s.unpin(before[0])
    assert s.pins == ()


def test_a_failing_rerank_is_reported(qtbot):
    s = QuerySession()
    s.set_pool(synthetic_pool(seed=6))
    bad = replace(Config(), top_k=5)
    object.__setattr__(bad, "scheme", "no-such-scheme")  # bypass validation: a scheme the core lacks
    with qtbot.waitSignal(s.rerank_failed):
        s.set_config(bad)


def test_a_knob_that_needs_deeper_lists_deepens_the_pool_off_the_ui_thread(qtbot, tmp_path):
    """A pool recalled for top_k 4 and moved to top_k 50: the deeper ranking comes from a worker
    thread, equals a fresh search at that depth, and the newest settings win meanwhile."""
    from core.recall.backends import open_store
    from core.recall.engine import Engine
    from core.cli.bench_scale import RandomEmbedder
    from tests.recall.test_deepen import DIM, fresh, user_data

    store = open_store(tmp_path / "store", create=True)
    store.write_user("u", *user_data(120, seed=5), RandomEmbedder(DIM).key, DIM)
    store.close()
    engine = Engine(tmp_path / "store", embedder=RandomEmbedder(DIM))
    try:
        s = QuerySession(throttle_ms=0)
        s.set_pool(engine.recall("u", "w3 w4 w5", Config().route_limit))
        assert s.ranking.pool.depth == Config().route_limit
        deep = replace(Config(), top_k=50)
        with qtbot.waitSignal(s.ranking_changed, timeout=10000) as blocker:
            s.set_config(deep, "top_k")
            assert s.is_deepening and s.ranking.config.top_k == 4  # the old ranking stays meanwhile
            s.set_config(replace(deep, mmr_lambda=0.5), "mmr_lambda")  # a newer tick while it deepens
        assert not s.is_deepening
        got = blocker.args[0]
        assert got.config.mmr_lambda == 0.5 and got.pool.depth == deep.route_limit
        assert got.results == rerank(fresh(engine, "w3 w4 w5", deep.route_limit), got.config).results
        s.set_config(Config(), "top_k")  # back down: the cached shallower pool, at once
        assert not s.is_deepening and s.ranking.pool.depth == Config().route_limit
    finally:
        engine.close()
