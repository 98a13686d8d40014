"""Auto-tuning: search the knobs for the best value of one metric on training users, and
report the same metric on held-out users (other conversations), so over-fitting shows.

Every trial re-ranks cached recall pools, all questions at once (`core.evaluation.batch`),
in worker processes with `jobs` > 1 (`core.evaluation.parallel`): tens of microseconds per
question, so hundreds of trials cost seconds. The search is seeded and has no dependency
beyond numpy:

1. trial 0 is the starting config (by default Memsense's), then any seed configs (the CLI
   passes the built-in RRF presets: a warm start, they are points of the same space);
2. random search: a third of the budget draws every knob uniformly in its range (a route
   weight is 0, i.e. off, with probability 1/4; another knob is at one end of its range with
   probability 1/5; `rrf_k` is drawn log-uniformly);
3. coordinate refinement from the best so far: each knob in turn tries `value ± step`
   (step a quarter of its range at first, halved after a pass with no gain; `rrf_k` doubles
   or halves), keeping a move when it wins, until the steps are tiny;
4. iterated local search for the rest of the budget: a perturbed copy of the best (each knob
   moved with probability 1/3 by a normal step of 15 % of its range) is tried, and refined as
   in 3 when it wins.

A trial wins when its train metric is higher, ties broken by the train mean of a second
metric (nDCG@k, or MRR when tuning nDCG). Sensitivity: with the best config fixed, each knob
alone is swept over evenly spaced values of its range (train and test metric at each).
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from core.config import KNOBS as CONFIG_KNOBS
from core.config import Config, to_dict
from core.config.knobs import Knob as ConfigKnob
from core.errors import MemsenseError
from core.evaluation.batch_metrics import mean
from core.evaluation.metrics import metric_key, parse_metric
from core.evaluation.parallel import Evaluator
from core.recall.pool import RecallPool
from core.records import Question

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Knob:
    """A knob the tuner searches, over the range its declaration gives (`core.config.Knob.tune`)."""

    knob: ConfigKnob
    span: tuple[float, float] | None = None
    """A range chosen for this search (`core.evaluation.space`), else the declared one."""

    @property
    def name(self) -> str:
        return self.knob.name

    @property
    def bounds(self) -> tuple[float, float]:
        """The range searched: `span` when chosen, else the declared one (every knob of `KNOBS`
        and `POOL_KNOBS` declares one)."""
        if self.span is not None:
            return self.span
        if self.knob.tune is None:
            raise ValueError(f"{self.name} declares no tuning range")
        return self.knob.tune

    @property
    def legal(self) -> tuple[float, float]:
        """The values the knob may take at all (`core.config.Knob.low/high`)."""
        return self.knob.low, self.knob.high

    @property
    def low(self) -> float:
        return self.bounds[0]

    @property
    def high(self) -> float:
        return self.bounds[1]

    @property
    def log(self) -> bool:
        return self.knob.log

    def get(self, cfg: Config) -> float:
        return float(self.knob.value(cfg))

    @property
    def integer(self) -> bool:
        """A count (the pool limits): values are whole numbers."""
        return self.knob.integer

    def set(self, cfg: Config, value: float) -> Config:
        return self.knob.apply(cfg, self.setting(value))

    def setting(self, value: float) -> float | int:
        """What `set` gives the knob for `value`: clamped to the range, at 4 decimals, whole for a count."""
        value = round(min(self.high, max(self.low, float(value))), 4)
        return int(round(value)) if self.integer else value

    def draw(self, rng: np.random.Generator) -> float:
        if self.log:
            return float(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))
        if self.name.startswith("route_weights."):
            return 0.0 if rng.random() < 0.25 else float(rng.uniform(self.low, self.high))
        if rng.random() < 0.2:
            return self.low if rng.random() < 0.5 else self.high
        return float(rng.uniform(self.low, self.high))

    def nudge(self, value: float, rng: np.random.Generator, scale: float = 0.15) -> float:
        """A normal step of `scale` of the range (of its logarithm for a log knob)."""
        if self.log:
            span = math.log(self.high) - math.log(self.low)
            return float(math.exp(math.log(max(value, self.low)) + rng.normal(0, scale * span)))
        return float(value + rng.normal(0, scale * (self.high - self.low)))

    def grid(self, points: int) -> list[float]:
        if self.integer:
            return sorted({int(round(float(v))) for v in np.linspace(self.low, self.high, points)})
        if self.log:
            return [round(float(v), 4) for v in np.geomspace(self.low, self.high, points)]
        return [round(float(v), 4) for v in np.linspace(self.low, self.high, points)]


POOL_LIMITS = ("candidate_multiplier", "candidate_min", "route_multiplier", "route_min")
KNOBS: tuple[Knob, ...] = tuple(Knob(k) for k in CONFIG_KNOBS.values() if k.tune and k.name not in POOL_LIMITS)
"""The knobs searched (SPEC §2-§5) and their ranges, inside `core.config.BOUNDS`: route weights,
k, alpha, lambda, duplicate threshold, the MMR tag weight and turn support. Any recall pool deep
enough for the starting config serves every trial."""
POOL_KNOBS: tuple[Knob, ...] = tuple(Knob(CONFIG_KNOBS[name]) for name in POOL_LIMITS)
"""The pool limits (`candidate_limit = max(candidate_multiplier·top_k, candidate_min)`,
`route_limit = max(route_multiplier·candidate_limit, route_min)`): tuning them needs recall
pools as deep as `knob_depth` says."""
ALL_KNOBS: tuple[Knob, ...] = KNOBS + POOL_KNOBS


def set_knobs(cfg: Config, values: Iterable[tuple[Knob, float]]) -> Config:
    """`cfg` with each knob `set` to its value, in at most two copies of the config
    (`core.config.knobs.Knob.apply_all`): the config setting them one after another gives."""
    return ConfigKnob.apply_all(cfg, ((k.knob, k.setting(v)) for k, v in values))


def knob_depth(knobs: Sequence[Knob], top_k: int) -> int:
    """The deepest route list any config in these ranges asks for at `top_k`, so recall keeps
    enough for every trial: `route_limit` at the top of each limit's range."""
    top = {k.name: k.high for k in knobs}
    base = Config()
    cand = max(int(top.get("candidate_multiplier", base.candidate_multiplier)) * top_k,
               int(top.get("candidate_min", base.candidate_min)))
    return max(int(top.get("route_multiplier", base.route_multiplier)) * cand,
               int(top.get("route_min", base.route_min)))


@dataclass(frozen=True)
class Trial:
    number: int
    stage: str  # start | random | refine
    config: Config
    train: float
    test: float | None
    tiebreak: float  # train mean of the tie-break metric

    def to_json(self) -> dict:
        return {"trial": self.number, "stage": self.stage, "train": self.train, "test": self.test,
                "config": to_dict(self.config)}


TrialSeen = Callable[[Trial], None]
"""Called with each trial as soon as it is scored (on the searching thread)."""


@dataclass(frozen=True)
class TuneResult:
    metric: str
    train_users: tuple[str, ...]
    test_users: tuple[str, ...]
    train_questions: int
    test_questions: int
    trials: tuple[Trial, ...]
    best: Trial
    sensitivity: Mapping[str, tuple[tuple[float, float, float | None], ...]] = field(default_factory=dict)
    """knob -> ((value, train metric, test metric), ...) with the other knobs at the best config."""
    cancelled: bool = False
    importances: Mapping[str, float] = field(default_factory=dict)
    """knob -> share of the train metric's variance it explains over the trials (fANOVA;
    filled by the Optuna search, empty for the local search)."""

    @property
    def start(self) -> Trial:
        return self.trials[0]

    def to_json(self) -> dict:
        return {
            "metric": self.metric, "train_users": list(self.train_users), "test_users": list(self.test_users),
            "train_questions": self.train_questions, "test_questions": self.test_questions,
            "start": self.start.to_json(), "best": self.best.to_json(), "cancelled": self.cancelled,
            "trials": [t.to_json() for t in self.trials],
            "sensitivity": {k: [{"value": v, "train": a, "test": b} for v, a, b in pts]
                            for k, pts in self.sensitivity.items()},
            "importances": dict(self.importances),
        }


@dataclass(frozen=True)
class Score:
    """A config's train mean of the metric and of the tie-break, and its held-out mean."""

    train: float
    tiebreak: float
    test: float | None


class Scorer:
    """Means over fixed train and held-out questions with cached pools: every question is
    re-ranked once per config, all at once (`core.evaluation.batch`), in worker processes
    when the `Evaluator` has more than one job. Close it (or use `with`) to stop them."""

    def __init__(self, evaluator: Evaluator, train: Sequence[Question], test: Sequence[Question], owned: bool):
        where = {q: i for i, q in enumerate(evaluator.ids)}
        self.evaluator, self.owned = evaluator, owned
        self.train = np.array([where[q.question_id] for q in train], dtype=np.int64)
        self.test = np.array([where[q.question_id] for q in test], dtype=np.int64)

    def submit(self, cfg: Config) -> int:
        return self.evaluator.submit(cfg)

    def result(self, ticket: int) -> Score:
        values = self.evaluator.result(ticket)
        return Score(mean(values[0, self.train]), mean(values[1, self.train]),
                     mean(values[0, self.test]) if len(self.test) else None)

    def __call__(self, cfg: Config) -> Score:
        return self.result(self.submit(cfg))

    def many(self, cfgs: Sequence[Config]) -> list[Score]:
        tickets = [self.submit(c) for c in cfgs]
        return [self.result(t) for t in tickets]

    def close(self) -> None:
        if self.owned:
            self.evaluator.close()

    def __enter__(self) -> "Scorer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def seed_presets(start: Config | None = None) -> list[Config]:
    """The built-in presets of the RRF scheme (the space searched), `start` excluded."""
    from core.config.presets import BUILTIN

    return [c for c in BUILTIN.values() if c.scheme == "rrf" and c != start]


def split_users(questions: Sequence[Question], train: Sequence[str], test: Sequence[str]) -> tuple[list[Question], list[Question]]:
    """Questions of the training users and of the held-out users (which must differ)."""
    both = sorted(set(train) & set(test))
    if both:
        raise MemsenseError(f"user {', '.join(both)} is in both --train and --test; held-out users must be others")
    if not train:
        raise MemsenseError("name at least one training user (--train USER,USER)")
    users = {q.user_id for q in questions}
    unknown = sorted((set(train) | set(test)) - users)
    if unknown:
        raise MemsenseError(f"no judged questions for user {', '.join(unknown)}; users with questions: {', '.join(sorted(users))}")
    return [q for q in questions if q.user_id in train], [q for q in questions if q.user_id in test]


def metric_pair(metric: str) -> tuple[str, str, int]:
    """The metric's key, its tie-break's (nDCG@k, or MRR when tuning nDCG) and k."""
    base, k = parse_metric(metric)
    return metric_key(base, k), metric_key("mrr" if base == "ndcg" else "ndcg", k), k


def evaluator_for(pools: Mapping[str, RecallPool], questions: Sequence[Question], metric: str,
                  jobs: int = 1) -> Evaluator:
    """An `Evaluator` of the metric and its tie-break over `questions` (share it between
    searches on subsets of them, as cross-validation does)."""
    name, tiebreak, k = metric_pair(metric)
    return Evaluator(pools, questions, [(name, k), (tiebreak, k)], jobs)


def open_scorer(pools: Mapping[str, RecallPool], train: Sequence[Question], test: Sequence[Question], metric: str,
                jobs: int = 1, evaluator: Evaluator | None = None) -> tuple[str, Scorer]:
    """The metric's key and the scorer every search uses; `evaluator` (from `evaluator_for`,
    over these questions and this metric) is used as is and left open."""
    name, tiebreak, _ = metric_pair(metric)
    if evaluator is not None and [m for m, _ in evaluator.metrics] != [name, tiebreak]:
        raise ValueError(f"the evaluator scores {evaluator.metrics}, not {name} and {tiebreak}")
    own = evaluator is None
    ev = evaluator if evaluator is not None else evaluator_for(pools, [*train, *test], metric, jobs)
    return name, Scorer(ev, train, test, own)


def tune(pools: Mapping[str, RecallPool], train: Sequence[Question], test: Sequence[Question], metric: str = "recall_all@4",
         trials: int = 100, seed: int = 0, start: Config | None = None, seeds: Sequence[Config] = (),
         knobs: Sequence[Knob] = KNOBS,
         sensitivity_points: int = 7, progress: Progress | None = None,
         cancel: threading.Event | None = None, jobs: int = 1, evaluator: Evaluator | None = None,
         on_trial: TrialSeen | None = None) -> TuneResult:
    """Search `knobs` for the best train `metric` in `trials` trials (see the module docstring);
    `jobs` worker processes score each trial (or `evaluator`, shared by cross-validation);
    `on_trial` is given each trial as soon as it is scored."""
    name, scorer = open_scorer(pools, train, test, metric, jobs, evaluator)
    with scorer:
        return _tune(name, scorer, train, test, trials, seed, start or Config(), seeds, knobs, sensitivity_points,
                     progress, cancel, on_trial)


def _tune(name: str, scorer: Scorer, train: Sequence[Question], test: Sequence[Question], trials: int, seed: int,
          start: Config, seeds: Sequence[Config], knobs: Sequence[Knob], sensitivity_points: int,
          progress: Progress | None, cancel: threading.Event | None, on_trial: TrialSeen | None = None) -> TuneResult:
    history: list[Trial] = []
    budget = max(1, trials)

    def run(cfg: Config, stage: str) -> Trial:
        score = scorer(cfg)
        tr = score.train
        trial = Trial(len(history), stage, cfg, tr, score.test, score.tiebreak)
        history.append(trial)
        if on_trial is not None:
            on_trial(trial)
        if progress:
            best = max(history, key=_key)
            progress(len(history), budget, f"trial {trial.number}: train {tr:.3f}, best {best.train:.3f}")
        return trial

    def stopped() -> bool:
        return len(history) >= budget or (cancel is not None and cancel.is_set())

    rng = np.random.default_rng(seed)
    run(start, "start")
    for cfg in seeds:
        if not stopped():
            run(cfg, "seed")
    while not stopped() and len(history) < max(1, budget // 3):
        run(set_knobs(start, ((knob, knob.draw(rng)) for knob in knobs)), "random")
    tried: set[tuple] = {_config_key(t.config) for t in history}
    best = _refine(max(history, key=_key), knobs, run, stopped, tried)
    while not stopped():
        cfg = best.config
        for knob in knobs:
            if rng.random() < 1 / 3:
                cfg = knob.set(cfg, knob.nudge(knob.get(cfg), rng))
        if _config_key(cfg) in tried:
            continue
        tried.add(_config_key(cfg))
        trial = run(cfg, "perturb")
        if _key(trial) > _key(best):
            best = _refine(trial, knobs, run, stopped, tried)
    cancelled = cancel is not None and cancel.is_set()
    sens = {} if cancelled or sensitivity_points < 2 else sensitivity(best.config, knobs, scorer,
                                                                      sensitivity_points, cancel, progress)
    return TuneResult(name, tuple(sorted({q.user_id for q in train})), tuple(sorted({q.user_id for q in test})),
                      len(train), len(test), tuple(history), best, sens,
                      cancelled or (cancel is not None and cancel.is_set()))


def _key(trial: Trial) -> tuple[float, float, int]:
    return (trial.train, trial.tiebreak, -trial.number)


def best_of(trials: Sequence[Trial]) -> Trial | None:
    """The trial a search would pick: the highest train metric, then tie-break, then the earliest."""
    return max(trials, key=_key, default=None)


def _refine(best: Trial, knobs: Sequence[Knob], run: Callable[[Config, str], Trial], stopped: Callable[[], bool],
            tried: set[tuple]) -> Trial:
    first = {kn.name: (kn.high - kn.low) / 4 for kn in knobs}
    steps = dict(first)
    while not stopped():
        improved = False
        for knob in knobs:
            for direction in (+1, -1):
                if stopped():
                    return best
                here = knob.get(best.config)
                if knob.log:  # a factor of 2 at first, shrinking with the step
                    value = here * 2.0 ** (direction * steps[knob.name] / first[knob.name])
                else:
                    value = here + direction * steps[knob.name]
                cfg = knob.set(best.config, value)
                key = _config_key(cfg)
                if knob.get(cfg) == here or key in tried:
                    continue
                tried.add(key)
                trial = run(cfg, "refine")
                if _key(trial) > _key(best):
                    best, improved = trial, True
                    break
        if not improved:
            if all(s < 1e-3 * (kn.high - kn.low) for kn, s in zip(knobs, steps.values())):
                return best
            steps = {n: s / 2 for n, s in steps.items()}
    return best


def _config_key(cfg: Config) -> tuple:
    d = to_dict(cfg)
    return tuple(sorted((k, tuple(sorted(v.items())) if isinstance(v, dict) else v) for k, v in d.items()))


def sensitivity(cfg: Config, knobs: Sequence[Knob], scorer: Scorer, points: int = 7,
                cancel: threading.Event | None = None,
                progress: Progress | None = None) -> dict[str, tuple[tuple[float, float, float | None], ...]]:
    """Metric against each knob alone: the knob swept over `points` values of its range (and
    its best value), every other knob at `cfg`; (value, train, held-out or None) per point.
    `progress(done, knobs, what)` after each knob (a sweep of 21 knobs takes seconds)."""
    out: dict[str, tuple[tuple[float, float, float | None], ...]] = {}
    for n, knob in enumerate(knobs, start=1):
        if cancel is not None and cancel.is_set():
            return out
        values = sorted(set(knob.grid(points)) | {round(knob.get(cfg), 4)})
        scores = scorer.many([knob.set(cfg, v) for v in values])
        out[knob.name] = tuple((v, s.train, s.test) for v, s in zip(values, scores))
        if progress:
            progress(n, len(knobs), f"sensitivity to {knob.name}")
    return out
