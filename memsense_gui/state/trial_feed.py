"""Trials as a search scores them, handed from the searching thread to the GUI, and the rate
they come at (for an ETA).

The search calls `TrialFeed.add(run, trial)` on its own thread; the GUI `drain`s what arrived
since (on each progress report and at the end), so the trial table and plot follow the search
live and a cancelled run still holds every trial it scored. `run` names the search: "search"
for a train/test split, "fold 1" ... "all users" for a cross-validation.

`TrialRate` measures the rate from the progress reports of trials scored in this run (a resumed
study's kept trials come at once and are not counted): trials done between the first and the
last report over the time between them.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from core.evaluation.tune import Trial, best_of

SPLIT_RUN = "search"
"""The one run of a train/test split."""


class TrialFeed:
    """Trials by run, filled from the searching thread, read on the GUI thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._new: list[tuple[str, Trial]] = []
        self.runs: dict[str, list[Trial]] = {}

    def reset(self) -> None:
        with self._lock:
            self._new.clear()
        self.runs = {}

    def add(self, run: str, trial: Trial) -> None:
        """Searching thread: a trial was scored."""
        with self._lock:
            self._new.append((run, trial))

    def drain(self) -> list[tuple[str, Trial]]:
        """GUI thread: the trials that arrived since the last drain (also kept in `runs`)."""
        with self._lock:
            new, self._new = self._new, []
        for run, trial in new:
            self.runs.setdefault(run, []).append(trial)
        return new

    @property
    def count(self) -> int:
        return sum(len(t) for t in self.runs.values())

    def kept_best(self) -> tuple[str, Trial, int] | None:
        """(run, its best trial, the trials it rests on) of the last run that scored any: what a
        cancelled search keeps (earlier folds trained on other users, so only one run counts)."""
        for run in reversed(list(self.runs)):
            best = best_of(self.runs[run])
            if best is not None:
                return run, best, len(self.runs[run])
        return None


class TrialRate:
    """Trials per second and the time left, from (done, total) reports of scored trials."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.first: tuple[float, int] | None = None
        self.last: tuple[float, int] | None = None
        self.total = 0

    def reset(self) -> None:
        self.first = self.last = None
        self.total = 0

    def observe(self, done: int, total: int) -> None:
        now = self.clock()
        if self.first is None or done < self.first[1]:
            self.first = (now, done)
        self.last, self.total = (now, done), total

    @property
    def rate(self) -> float | None:
        """Trials per second, measured (None until two reports apart in time and count)."""
        if self.first is None or self.last is None:
            return None
        seconds, trials = self.last[0] - self.first[0], self.last[1] - self.first[1]
        return trials / seconds if seconds > 0 and trials > 0 else None

    def eta(self) -> float | None:
        """Seconds left at the measured rate (None while unmeasured)."""
        rate = self.rate
        if rate is None or self.last is None:
            return None
        return max(0, self.total - self.last[1]) / rate

    def text(self) -> str:
        rate, eta = self.rate, self.eta()
        if rate is None or eta is None:
            return "measuring the trial rate…"
        return f"{rate:.1f} trials/s · about {_duration(eta)} left"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
