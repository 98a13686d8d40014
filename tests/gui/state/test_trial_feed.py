"""Trials handed from the searching thread to the GUI, what a cancelled run keeps, and the ETA."""
from __future__ import annotations

import threading

from core.config import Config
from core.evaluation.tune import Trial
from memsense_gui.state.trial_feed import TrialFeed, TrialRate


def _trial(n: int, train: float, tiebreak: float = 0.0) -> Trial:
    return Trial(n, "tpe", Config(), train, None, tiebreak)


def test_trials_from_another_thread_arrive_in_order_by_run():
    feed = TrialFeed()
    worker = threading.Thread(target=lambda: [feed.add("fold 1", _trial(n, n / 10)) for n in range(50)])
    worker.start()
    worker.join()
    feed.add("fold 2", _trial(0, 0.2))
    new = feed.drain()
    assert len(new) == 51 and [t.number for t in feed.runs["fold 1"]] == list(range(50))
    assert feed.drain() == [] and feed.count == 51


def test_a_cancelled_run_keeps_the_best_of_the_last_run_with_its_count():
    feed = TrialFeed()
    for n, train in enumerate((0.2, 0.5, 0.5, 0.4)):
        feed.add("fold 1", _trial(n, train, tiebreak=0.1 * (n == 2)))
    feed.add("fold 2", _trial(0, 0.3))
    feed.add("fold 2", _trial(1, 0.1))
    feed.drain()
    run, best, n = feed.kept_best()
    assert (run, best.number, n) == ("fold 2", 0, 2)
    feed.runs.pop("fold 2")
    run, best, n = feed.kept_best()
    assert (run, best.number, n) == ("fold 1", 2, 4)  # tie on train broken by the tie-break
    assert TrialFeed().kept_best() is None


def test_the_rate_and_time_left_are_measured_from_trial_reports():
    now = [100.0]
    rate = TrialRate(clock=lambda: now[0])
    rate.observe(5, 105)  # a resumed study: 5 kept trials, no time spent on them here
    assert rate.rate is None and "measuring" in rate.text()
    now[0] += 2.0
    rate.observe(15, 105)
    assert rate.rate == 5.0 and rate.eta() == 18.0 and rate.text() == "5.0 trials/s · about 18 s left"
    now[0] += 30.0
    rate.observe(105, 105)
    assert rate.eta() == 0.0
