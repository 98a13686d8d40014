"""The parts of QuerySession, each without a window: the config throttle, movement and pins,
and the pool holder whose deepening is a job on a task runner (no raw threads in the GUI)."""
from __future__ import annotations

import re
import threading
from dataclasses import replace
from pathlib import Path

from core.config import Config
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from memsense_gui.state.movement import Movement
from memsense_gui.state.pools import PoolHolder
from memsense_gui.state.throttle import ConfigThrottle
from memsense_gui.workers.runner import TaskRunner
from tests.gui.fixtures import deepening_threads
from tests.recall.test_deepen import fresh

DEEP = replace(Config(), top_k=50)


def test_the_throttle_applies_a_burst_once_per_interval_and_the_newest_last(qtbot):
    throttle = ConfigThrottle(interval_ms=40)
    applied: list[tuple[float, str | None]] = []
    throttle.apply.connect(lambda cfg, knob: (applied.append((cfg.alpha, knob)), throttle.applied()))
    values = [round(0.01 * i, 2) for i in range(40)]
    for v in values:
        throttle.request(replace(Config(), alpha=v), "alpha")
    qtbot.waitUntil(lambda: bool(applied) and applied[-1] == (values[-1], "alpha"), timeout=2000)
    assert applied[0] == (values[0], "alpha") and len(applied) < len(values)


def test_movement_follows_gestures_unless_a_baseline_is_pinned(qtbot):
    m = Movement()
    pool = synthetic_pool(seed=3)
    first, second = rerank(pool, Config()), rerank(pool, replace(Config(), alpha=0.3))
    m.config_changed("alpha", first)
    m.config_changed("alpha", second)  # the same gesture: still against the ranking before it
    assert m.baseline is first
    m.config_changed("mmr_lambda", second)
    assert m.baseline is second
    with qtbot.waitSignal(m.baseline_changed):
        m.pin_baseline("deep", DEEP, has_pool=True)
    assert m.baseline is None and m.due_config() == DEEP
    m.config_changed("top_k", first)  # pinned: gestures do not move it
    assert m.baseline is None
    m.ranked(second)
    assert m.due_config() is None and m.previous_rank(second.result_ids[0]) == 1
    m.new_pool()
    assert m.baseline is None and m.due_config() == DEEP
    with qtbot.waitSignal(m.pins_changed):
        m.pin("a")
    m.pin("a")
    assert m.pins == ("a",)


def test_pins_are_put_aside_per_user_and_a_store_change_clears_them_all(qtbot):
    m = Movement()
    m.show_user("u1")
    m.pin("u1:a")
    with qtbot.waitSignal(m.pins_changed) as shown:
        m.show_user("u2")
    assert shown.args == [()] and m.pins == ()
    m.pin("u2:b")
    m.show_user("u1")
    assert m.pins == ("u1:a",)
    m.clear_pins()
    m.show_user("u2")
    assert m.pins == ()


def test_the_holder_deepens_on_its_runner_and_a_new_query_drops_the_last_ones(qtbot, scan_engine, monkeypatch):
    holder = PoolHolder(TaskRunner("test-deepen"))
    shallow = scan_engine.recall("u", "w3 w4 w5", Config().route_limit)
    threads = deepening_threads(monkeypatch)
    holder.set(shallow)
    assert holder.ready(Config().route_limit) and not holder.ready(DEEP.route_limit)
    with qtbot.waitSignal(holder.deepened, timeout=10_000) as blocker:
        holder.deepen(DEEP.route_limit)
        assert holder.is_deepening
        holder.deepen(DEEP.route_limit)  # asked again meanwhile: one job
    assert blocker.args == [shallow] and not holder.is_deepening
    assert len(threads) == 1 and threads[0] is not threading.main_thread()
    deep = holder.pool_for(DEEP.route_limit)
    assert deep is holder.deep and deep.depth == DEEP.route_limit
    assert rerank(deep, DEEP).results == rerank(fresh(scan_engine, "w3 w4 w5", DEEP.route_limit), DEEP).results

    older, newer = (scan_engine.recall("u", q, Config().route_limit) for q in ("w1 w2", "w7 w8"))
    hold = threading.Event()
    monkeypatch.undo()
    deepening_threads(monkeypatch, hold)
    holder.set(older)
    holder.deepen(DEEP.route_limit)
    holder.set(newer)  # a new query while the last one's lists are ranked
    assert not holder.is_deepening
    seen = []
    holder.deepened.connect(seen.append)
    with qtbot.waitSignal(holder.runner.task_done, timeout=10_000):
        hold.set()
    assert seen == [] and holder.deep is newer  # the old query's deeper pool is not taken


def test_the_gui_starts_no_raw_threads():
    """Work off the UI thread goes through the task runner (memsense_gui/workers/runner.py)."""
    root = Path(__file__).resolve().parents[3] / "memsense_gui"
    raw = [str(p) for p in root.rglob("*.py") if re.search(r"threading\.Thread\(", p.read_text())]
    assert raw == []
