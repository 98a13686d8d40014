"""The auto-tune's work as the Auto-tune tab runs it off the GUI thread: the callables it is given
(a train/test search, a cross-validation) and the job functions that call them with the task's
progress, cancel token, the search space and the per-trial callback. `pool_limits`: search the
pool limits too, as the CLI does."""
from __future__ import annotations

import threading
from typing import Callable, Protocol, Sequence

from core.evaluation.cv import CrossValidation, FoldTrialSeen
from core.evaluation.space import SearchSpace
from core.evaluation.tune import TrialSeen, TuneResult
from memsense_gui.workers.runner import Job


class TuneFn(Protocol):
    """(train users, test users, metric, trials, progress, cancel; pool_limits, the search space,
    a callback per trial scored) -> the tuning's result."""

    def __call__(self, train: Sequence[str], test: Sequence[str], metric: str, trials: int,
                 progress: Callable[[int, int, str], None], cancel: threading.Event, /, *,
                 pool_limits: bool = False, space: SearchSpace | None = None,
                 on_trial: TrialSeen | None = None) -> TuneResult: ...


class CrossValidateFn(Protocol):
    """(users, metric, trials, folds, progress, cancel; pool_limits, the search space, a callback
    per trial scored with its fold, users kept out of it all to report on) -> the cross-validation."""

    def __call__(self, users: Sequence[str], metric: str, trials: int, folds: int,
                 progress: Callable[[int, int, str], None], cancel: threading.Event, /, *,
                 pool_limits: bool = False, space: SearchSpace | None = None,
                 on_trial: FoldTrialSeen | None = None, test: Sequence[str] = ()) -> CrossValidation: ...


def run_tune(tune: TuneFn, train: list[str], test: list[str], metric: str, trials: int, pool_limits: bool,
              space: SearchSpace, on_trial: TrialSeen, task: Job) -> TuneResult:
    return tune(train, test, metric, trials, task.report, task.cancel_event, pool_limits=pool_limits, space=space,
                on_trial=on_trial)


def run_cv(cross_validate: CrossValidateFn, users: list[str], metric: str, trials: int, folds: int,
            pool_limits: bool, space: SearchSpace, on_trial: FoldTrialSeen, test: list[str], task: Job) -> CrossValidation:
    return cross_validate(users, metric, trials, folds, task.report, task.cancel_event, pool_limits=pool_limits,
                          space=space, on_trial=on_trial, test=test)
