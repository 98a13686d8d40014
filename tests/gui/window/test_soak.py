"""A long day's use in one app process (issue 39, class 6): 2,000 slider changes, 50 evaluations, 20
diagnoses, 10 Find a fix searches and 5 store switches on the real engine, between the demo store and a
second store built beside it (`tools.soak` drives the window and prints the curve). Resident memory
after the warm-up grows by less than 50 MB, and no kind of step takes longer at the end than at the
start beyond the noise of a shared machine (`tools.soak.TOLERANCE`)."""
from __future__ import annotations

import os

import pytest

from core.evaluation.history import History, history_path
from tools.soak import GROWTH_MB, KINDS, TOLERANCE, Plan, Session, build_stores, make_window

pytestmark = pytest.mark.slow


def test_a_long_day_of_use_keeps_memory_and_step_times_flat(qtbot, app_home, tmp_path, model_cache):
    stores = build_stores(tmp_path / "stores", model_cache)
    window = make_window(app_home, model_cache)
    qtbot.addWidget(window)
    kept: list[int] = []
    window.ctx.runs.recorded.connect(kept.append)
    plan = Plan()
    curve = Session(window, stores, plan).run(print)
    print(curve.table())
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))

    # the session did what the plan says, every step of it
    steps = plan.counts()
    assert [sum(1 for _s, k, *_ in curve.steps if k == kind) for kind in KINDS] == list(steps.values())
    assert steps["drag"] * 5 >= plan.sliders and len(curve.rss) == plan.segments
    qtbot.waitUntil(lambda: not window.ctx.runs.runner.busy, timeout=60_000)
    assert len(kept) >= plan.evaluations + plan.diagnoses  # each kept in its store's history (a fix whose
    total = 0  # cases pass by then keeps none)
    for store in stores:
        with History(history_path(store), create=False) as history:
            total += len(history.runs())
    assert total >= len(kept)  # a diagnose superseded after it kept its run is kept, not announced

    assert curve.growth_mb() < GROWTH_MB, curve.table()
    assert curve.slower(TOLERANCE) == [], curve.table()
