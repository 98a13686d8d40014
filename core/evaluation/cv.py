"""Honest tuning: k-fold cross-validation by user (SPEC §12).

The users are shuffled (seeded) and dealt into k folds; each fold holds whole users out. For
every fold the search runs on the other folds' users alone and its winner is scored on the
held-out users, so each question is scored exactly once by a config that never saw its user.
Reported per fold: the winner's train and held-out metric beside the starting config's; over
the folds: the spread of the held-out figures, and the cross-validated metric (every question
scored by its fold's winner, averaged over all questions) beside the starting config's on the
same questions. The gain is the per-question difference of the two; its 95 % confidence
interval is a percentile bootstrap over questions (scipy, seeded).

What is offered is chosen out of sample (SPEC §16, `core.evaluation.choice`): the start config,
every preset given (built-in and the user's) and the search are each scored on every fold's
held-out users (a preset learns nothing, so that is its plain metric there; the search's figure
is its fold winner's), and the one-standard-error rule picks among them. When the search is
chosen, its config is the search run once more on every user (the same search and budget):
cross-validation measured how well that procedure does on users it did not see. A cancelled run
chooses by the same rule over the folds it finished; the search is a contender then only when
its run on every user scored a trial of its own.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from core.config import Config, to_dict
from core.errors import MemsenseError
from core.evaluation.choice import PRESET, SEARCH, START, Choice, Contender, choose, contender, preset_folds
from core.evaluation.evaluate import evaluate_config
from core.evaluation.metrics import metric_key, parse_metric
from core.evaluation.tune import Progress, Trial, TuneResult, evaluator_for
from core.recall.pool import RecallPool
from core.records import Question

Search = Callable[..., TuneResult]
"""`(pools, train, test, metric=, trials=, seed=, start=, progress=, cancel=, evaluator=, **kw) -> TuneResult`;
`evaluator` (`core.evaluation.tune.evaluator_for` over every question) scores its trials."""
BOOTSTRAP_RESAMPLES = 2000
DEFAULT_FOLDS = 5
"""Folds over the training users of a train/test split (fewer when there are fewer users)."""
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
    choice: Choice  # what is offered: the one-standard-error rule over the contenders (SPEC §16)
    cancelled: bool = False
    folds_planned: int = 0  # k; fewer folds in `folds` when cancelled
    test_users: tuple[str, ...] = ()  # users kept out of the whole cross-validation (a train/test split)
    test_scores: Mapping[str, float] = field(default_factory=dict)
    """Contender name -> its metric on `test_users`' questions (empty without them)."""

    @property
    def gain(self) -> float:
        return self.cv_metric - self.start_metric

    @property
    def generalises(self) -> bool:
        """The search's cross-validated gain over the start is above zero."""
        return self.gain > 0 and not self.cancelled

    @property
    def best(self) -> Config:
        """The config offered: the contender the one-standard-error rule chose (the start's own
        settings when it won: nothing to change)."""
        return self.choice.chosen.config

    @property
    def chosen(self) -> Contender:
        return self.choice.chosen

    @property
    def trials_done(self) -> int:
        """Trials scored in all: every fold's search and the search on every user."""
        unsearched = self.cancelled and self.final.best.number == 0 and len(self.final.trials) == 1
        return sum(f.trials for f in self.folds) + (0 if unsearched else len(self.final.trials))

    @property
    def held_spread(self) -> tuple[float, float, float]:
        """(standard deviation, min, max) of the folds' held-out figures."""
        held = np.array([f.held for f in self.folds])
        return float(held.std(ddof=1)) if len(held) > 1 else 0.0, float(held.min()), float(held.max())

    def rests_on(self) -> str:
        """How many folds and trials the choice rests on."""
        planned = self.folds_planned or len(self.folds)
        return f"{len(self.folds)} of {planned} folds, {self.trials_done} trials"

    def verdict(self) -> str:
        lo, hi = self.gain_ci
        figures = (f"the search's held-out {self.metric} pooled over {self.questions} questions {self.cv_metric:.3f} "
                   f"against the start's {self.start_metric:.3f} (gain {self.gain:+.3f}, 95 % CI {lo:+.3f} to {hi:+.3f})")
        chosen = f"chosen by the one-standard-error rule: {self.choice.reason()}"
        if self.cancelled:
            return f"cancelled: {figures} over {self.rests_on()}; {chosen}"
        return f"{figures}; {chosen}"

    def to_json(self) -> dict:
        sd, lo, hi = self.held_spread
        return {"metric": self.metric, "search": self.search, "seed": self.seed, "questions": self.questions,
                "folds": [f.to_json() for f in self.folds], "cross_validated": self.cv_metric,
                "start": self.start_metric, "gain": self.gain, "gain_ci95": list(self.gain_ci),
                "held_out_sd": sd, "held_out_min": lo, "held_out_max": hi, "generalises": self.generalises,
                "verdict": self.verdict(), "cancelled": self.cancelled, "folds_planned": self.folds_planned,
                "trials_done": self.trials_done, "final": self.final.to_json(), "choice": self.choice.to_json(),
                "chosen": self.chosen.to_json(), "best": to_dict(self.best), "test_users": list(self.test_users),
                "test": dict(self.test_scores)}


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
                   presets: Mapping[str, Config] | None = None, start_name: str = "start",
                   test: Sequence[Question] = (), **search_options) -> CrossValidation:
    """Tune on k−1 folds, score on the held-out one, for each fold; then tune on every user; choose
    among the start (`start_name`), `presets` (name -> config) and the search (module docstring).
    `test`: questions of users kept out of all of it (a train/test split), on which every contender
    is reported once the choice is made (`CrossValidation.test_scores`); `pools` must hold them.

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
    if {q.user_id for q in test} & {q.user_id for q in questions}:
        raise MemsenseError("a held-out user is also among the users cross-validated; held-out users must be others")
    with evaluator_for(pools, questions, name, jobs) as evaluator:  # every fold's trials score all questions once
        cv = _cross_validate(pools, questions, search, search_name, name, k, groups, trials, seed, start, progress,
                             cancel, study, dict(search_options, evaluator=evaluator), on_trial,
                             {start_name: start, **{n: c for n, c in (presets or {}).items() if n != start_name}})
    if not test:
        return cv
    scores = {c.name: evaluate_config(pools, test, c.config, k).overall[name] for c in cv.choice.contenders}
    return dataclasses.replace(cv, test_users=tuple(sorted({q.user_id for q in test})), test_scores=scores)


def _cross_validate(pools: Mapping[str, RecallPool], questions: Sequence[Question], search: Search, search_name: str,
                    name: str, k: int, groups: list[tuple[str, ...]], trials: int, seed: int, start: Config,
                    progress: Progress | None, cancel: threading.Event | None, study: str | None,
                    search_options: dict, on_trial: FoldTrialSeen | None = None,
                    fixed: Mapping[str, Config] | None = None) -> CrossValidation:
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
    final = _unsearched(pools, questions, start, name, k) if cancelled else \
        search(pools, list(questions), [], metric=name, trials=trials, seed=seed, start=start, progress=stage(runs),
               cancel=cancel, **opts, **seen(runs))
    cancelled = cancelled or (cancel is not None and cancel.is_set())
    choice = _choose(pools, questions, k, name, start, fixed or {"start": start}, out, final, start_scores)
    return CrossValidation(name, search_name, seed, tuple(out), len(scored),
                           float(np.mean([held_scores[q.question_id] for q in scored])),
                           float(np.mean(list(start_scores.values()))), bootstrap_ci(gains, seed), final, choice,
                           cancelled, len(groups))


def _unsearched(pools: Mapping[str, RecallPool], questions: Sequence[Question], start: Config, name: str,
                k: int) -> TuneResult:
    """What a run cancelled before its search on every user has of it: the start, scored on every user
    (trial 0, as a search's first trial is); `_choose` then offers no searched config."""
    train = evaluate_config(pools, questions, start, k).overall[name]
    trial = Trial(0, "start", start, train, None, 0.0)
    return TuneResult(name, tuple(sorted({q.user_id for q in questions})), (), len(questions), 0, (trial,), trial,
                      cancelled=True)


def _choose(pools: Mapping[str, RecallPool], questions: Sequence[Question], k: int, name: str, start: Config,
            fixed: Mapping[str, Config], folds: Sequence[Fold], final: TuneResult,
            start_scores: Mapping[str, float]) -> Choice:
    """The one-standard-error choice among the fixed configs (the first is the start, whose scores on the
    held-out questions are `start_scores`) and the search, each scored on the held-out users of every fold
    finished (`core.evaluation.choice`)."""
    held = [[q.question_id for q in questions if q.user_id in f.held_users] for f in folds]
    wanted = {q for ids in held for q in ids}
    asked = [q for q in questions if q.question_id in wanted]
    contenders: list[Contender] = []
    for n, (label, cfg) in enumerate(fixed.items()):
        scores = start_scores if n == 0 else evaluate_config(pools, asked, cfg, k).scores(name)
        contenders.append(contender(label, START if n == 0 else PRESET, cfg, preset_folds(scores, held), start))
    if final.best.number > 0:  # trial 0 is the start itself (and all a search cancelled before it began scores)
        contenders.append(contender(f"tuned ({SEARCH})", SEARCH, final.best.config, [f.held for f in folds], start))
    return choose(contenders)


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
