"""Honest tuning: k-fold cross-validation by user (SPEC §12).

The users are shuffled (seeded) and dealt into k folds; each fold holds whole users out. For
every fold the search runs on the other folds' users alone and its winner is scored on the
held-out users, so each question is scored exactly once by a config that never saw its user.
Reported per fold: the winner's train and held-out metric beside the starting config's; over
the folds: the spread of the held-out figures, and the cross-validated metric (every question
scored by its fold's winner, averaged over all questions) beside the starting config's on the
same questions. The gain is the per-question difference of the two; its 95 % confidence
interval is a percentile bootstrap over questions (scipy, seeded).

The config offered as "best" is the search run once more on every user (the same search and
budget): cross-validation measured how well that procedure does on users it did not see.
When the cross-validated gain is not above zero, tuning did not generalise: the result says
so and offers no config (the starting config stays the better choice).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from core.config import Config, to_dict
from core.errors import MemsenseError
from core.evaluation.evaluate import evaluate_config
from core.evaluation.metrics import metric_key, parse_metric
from core.evaluation.tune import Progress, Trial, TuneResult, evaluator_for
from core.recall.pool import RecallPool
from core.records import Question

Search = Callable[..., TuneResult]
"""`(pools, train, test, metric=, trials=, seed=, start=, progress=, cancel=, evaluator=, **kw) -> TuneResult`;
`evaluator` (`core.evaluation.tune.evaluator_for` over every question) scores its trials."""
BOOTSTRAP_RESAMPLES = 2000
FoldTrialSeen = Callable[[str, Trial], None]
"""`(run, trial)`: a trial of one search of a cross-validation, `run` as `fold_label` names it."""


def fold_label(n: int, folds: int) -> str:
    """The name of the n-th search (1-based) of a k-fold cross-validation: "fold n", then "all users"."""
    return f"fold {n}" if n <= folds else "all users"


@dataclass(frozen=True)
class Fold:
    number: int  # 1-based
    train_users: tuple[str, ...]
    held_users: tuple[str, ...]
    train_questions: int
    held_questions: int
    tuned: Config
    train: float  # the fold winner on its training users
    held: float  # the fold winner on the held-out users
    start_train: float
    start_held: float
    trials: int

    @property
    def gain(self) -> float:
        return self.held - self.start_held

    def to_json(self) -> dict:
        return {"fold": self.number, "train_users": list(self.train_users), "held_users": list(self.held_users),
                "train_questions": self.train_questions, "held_questions": self.held_questions,
                "train": self.train, "held_out": self.held, "start_train": self.start_train,
                "start_held_out": self.start_held, "gain": self.gain, "trials": self.trials,
                "config": to_dict(self.tuned)}


@dataclass(frozen=True)
class CrossValidation:
    metric: str
    search: str
    seed: int
    folds: tuple[Fold, ...]
    questions: int
    cv_metric: float  # each question scored by the winner of the fold that held it out
    start_metric: float  # the starting config on the same questions
    gain_ci: tuple[float, float]  # 95 % percentile bootstrap of the mean per-question gain
    final: TuneResult  # the same search on every user
    cancelled: bool = False

    @property
    def gain(self) -> float:
        return self.cv_metric - self.start_metric

    @property
    def generalises(self) -> bool:
        """The cross-validated gain is above zero: the tuned config may be offered."""
        return self.gain > 0 and not self.cancelled

    @property
    def best(self) -> Config | None:
        """The config to offer, or None when tuning did not beat the start on held-out users."""
        return self.final.best.config if self.generalises else None

    @property
    def held_spread(self) -> tuple[float, float, float]:
        """(standard deviation, min, max) of the folds' held-out figures."""
        held = np.array([f.held for f in self.folds])
        return float(held.std(ddof=1)) if len(held) > 1 else 0.0, float(held.min()), float(held.max())

    def verdict(self) -> str:
        lo, hi = self.gain_ci
        figures = (f"cross-validated {self.metric} {self.cv_metric:.3f} against the start's {self.start_metric:.3f} "
                   f"(gain {self.gain:+.3f}, 95 % CI {lo:+.3f} to {hi:+.3f})")
        if self.cancelled:
            return f"cancelled: {figures} over the folds finished; nothing offered"
        if not self.generalises:
            return f"tuning did not generalise: {figures}; no config is offered, keep the start"
        sure = "the interval excludes zero" if lo > 0 else "the interval includes zero, so the gain is uncertain"
        return f"tuning generalises: {figures}; {sure}"

    def to_json(self) -> dict:
        sd, lo, hi = self.held_spread
        return {"metric": self.metric, "search": self.search, "seed": self.seed, "questions": self.questions,
                "folds": [f.to_json() for f in self.folds], "cross_validated": self.cv_metric,
                "start": self.start_metric, "gain": self.gain, "gain_ci95": list(self.gain_ci),
                "held_out_sd": sd, "held_out_min": lo, "held_out_max": hi, "generalises": self.generalises,
                "verdict": self.verdict(), "cancelled": self.cancelled, "final": self.final.to_json(),
                "best": to_dict(self.best) if self.best is not None else None}


def user_folds(users: Sequence[str], k: int, seed: int = 0) -> list[tuple[str, ...]]:
    """The users shuffled (seeded) and dealt round-robin into k folds of whole users."""
    users = sorted(set(users))
    if k < 2:
        raise MemsenseError("--folds must be at least 2 (each fold holds some users out)")
    if len(users) < k:
        raise MemsenseError(f"--folds {k} needs at least {k} users with judged questions; there are {len(users)} "
                            f"({', '.join(users)}): use --folds {max(2, len(users))} or fewer")
    order = np.random.default_rng(seed).permutation(len(users))
    return [tuple(sorted(users[i] for i in order[f::k])) for f in range(k)]


def cross_validate(pools: Mapping[str, RecallPool], questions: Sequence[Question], search: Search,
                   search_name: str, metric: str = "recall_all@4", folds: int = 5, trials: int = 100,
                   seed: int = 0, start: Config | None = None, progress: Progress | None = None,
                   cancel: threading.Event | None = None, on_trial: FoldTrialSeen | None = None,
                   **search_options) -> CrossValidation:
    """Tune on k−1 folds, score on the held-out one, for each fold; then tune on every user.

    `on_trial(run, trial)` is given each trial of each search as it is scored, `run` naming the
    search (`fold_label`: "fold 1", ..., "all users").

    `search_options` go to every search call; a `study_name` is suffixed per fold (`-fold1`,
    ..., `-all`) so each fold keeps its own resumable study. `jobs` worker processes score the
    trials of every fold (one set of workers for the whole run).
    """
    base, k = parse_metric(metric)
    name = metric_key(base, k)
    start = start or Config()
    groups = user_folds([q.user_id for q in questions], folds, seed)
    study = search_options.pop("study_name", None)
    jobs = search_options.pop("jobs", 1)
    with evaluator_for(pools, questions, name, jobs) as evaluator:  # every fold's trials score all questions once
        return _cross_validate(pools, questions, search, search_name, name, k, groups, trials, seed, start, progress,
                               cancel, study, dict(search_options, evaluator=evaluator), on_trial)


def _cross_validate(pools: Mapping[str, RecallPool], questions: Sequence[Question], search: Search, search_name: str,
                    name: str, k: int, groups: list[tuple[str, ...]], trials: int, seed: int, start: Config,
                    progress: Progress | None, cancel: threading.Event | None, study: str | None,
                    search_options: dict, on_trial: FoldTrialSeen | None = None) -> CrossValidation:
    runs = len(groups) + 1

    def seen(n: int) -> dict:
        if on_trial is None:
            return {}
        label = fold_label(n, len(groups))
        return {"on_trial": lambda trial: on_trial(label, trial)}
    out: list[Fold] = []
    held_scores: dict[str, float] = {}

    def stage(n: int) -> Progress | None:
        if progress is None:
            return None
        label = f"{fold_label(n, len(groups))}/{len(groups)}" if n <= len(groups) else fold_label(n, len(groups))
        return lambda done, total, msg: progress((n - 1) * total + done, runs * total, f"{label}: {msg}")

    for n, held_users in enumerate(groups, start=1):
        if cancel is not None and cancel.is_set():
            break
        train = [q for q in questions if q.user_id not in held_users]
        held = [q for q in questions if q.user_id in held_users]
        opts = dict(search_options, study_name=f"{study}-fold{n}") if study else dict(search_options)
        opts["sensitivity_points"] = 0  # the sweep is for the config offered, not the folds'
        result = search(pools, train, held, metric=name, trials=trials, seed=seed, start=start,
                        progress=stage(n), cancel=cancel, **opts, **seen(n))
        tuned = result.best.config
        ev_held = evaluate_config(pools, held, tuned, k)
        held_scores.update(ev_held.scores(name))
        start_held = result.start.test
        if start_held is None:  # `search` scores every trial on the held-out questions it is given
            raise ValueError(f"fold {n}: the start config was not scored on the held-out users")
        out.append(Fold(n, tuple(sorted({q.user_id for q in train})), held_users, len(train), len(held), tuned,
                        result.best.train, ev_held.overall[name], result.start.train, start_held,
                        len(result.trials)))
    cancelled = cancel is not None and cancel.is_set()
    if not out:
        raise MemsenseError("cross-validation cancelled before the first fold finished")
    scored = [q for q in questions if q.question_id in held_scores]
    start_scores = evaluate_config(pools, scored, start, k).scores(name)
    gains = np.array([held_scores[q.question_id] - start_scores[q.question_id] for q in scored])
    opts = dict(search_options, study_name=f"{study}-all") if study else search_options
    final = search(pools, list(questions), [], metric=name, trials=0 if cancelled else trials, seed=seed,
                   start=start, progress=stage(runs), cancel=cancel, **opts, **seen(runs))
    return CrossValidation(name, search_name, seed, tuple(out), len(scored),
                           float(np.mean([held_scores[q.question_id] for q in scored])),
                           float(np.mean(list(start_scores.values()))), bootstrap_ci(gains, seed), final,
                           cancelled or (cancel is not None and cancel.is_set()))


def bootstrap_ci(values: np.ndarray, seed: int = 0, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (resampling questions)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2 or np.all(values == values[0]):
        v = float(values[0]) if len(values) else float("nan")
        return v, v
    from scipy import stats  # a second to import: only when an interval is asked for

    res = stats.bootstrap((values,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, confidence_level=confidence,
                          method="percentile", random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)
