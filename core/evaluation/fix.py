"""Find a fix: configs that win chosen failing questions back, and what they cost elsewhere.

The search re-ranks the cached pools of *every* question for each trial (`core.evaluation.parallel`,
the batched re-rank), so each trial's effect on the chosen cases and on every other question is
counted, not estimated:

1. single-knob sweeps: each knob alone over an even grid of its range (the smallest moves first
   show what one knob can do);
2. the rest of the budget: a seeded Optuna TPE study in which each knob is either left at its
   start value or moved (a yes/no parameter per knob, then its value), maximising the metric
   summed over every question with the chosen cases counted twice (a case won back is worth one
   more question), then fewest knobs changed.

A change is judged on the whole question set (SPEC §16). Candidates are the trials that win at
least one chosen case back and lie on the Pareto front of (metric over all questions ↑, chosen
cases fixed ↑, knobs changed ↓). Each is re-ranked once more with the plain `rerank` on every
question (`evaluate_config`): its fixed and broken lists, its metric and the paired significance
against the start config come from that re-rank. A question is *fixed* when the candidate's value
of the metric is above the start config's, *broken* when below: the same as `memsense compare --a
START --b CANDIDATE` counts wins and losses. A candidate whose metric over all questions is below
the start's with paired p < 0.05 is *harmful*. Candidates are listed not harmful first, then by
metric over all questions, net questions won (fixed − broken), chosen cases fixed, and fewest knobs
changed; beside the in-sample figures each carries the out-of-sample one: the metric on every
question but the chosen cases.
"""
from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import optuna

from core.config import Config, to_dict
from core.config.memsense_options import memsense_export
from core.errors import Cancelled, MemsenseError
from core.evaluation.evaluate import Progress, evaluate_config
from core.evaluation.metrics import compare, metric_key, parse_metric
from core.evaluation.parallel import Evaluator
from core.evaluation.tune import KNOBS, Knob
from core.recall.pool import RecallPool
from core.records import Question

SWEEP_POINTS = 6
"""Values per knob in the single-knob sweeps (each end of the range and four between)."""
MAX_CANDIDATES = 8
HARMFUL_P = 0.05
"""A candidate is harmful when its metric over all questions is below the start's at paired p below this."""


@dataclass(frozen=True)
class FixCandidate:
    """A config, what it changes, and what it does to every question (verified by `rerank`)."""

    config: Config
    changed: Mapping[str, tuple[float, float]]  # knob -> (start value, new value)
    cases_fixed: tuple[str, ...]  # of the chosen cases
    fixed: tuple[str, ...]  # every question whose metric rose
    broken: tuple[str, ...]  # every question whose metric fell
    metric_before: float  # over every question
    metric_after: float
    p_value: float  # paired, of the metric over every question against the start's
    others_before: float | None = None  # over every question but the chosen cases: the out-of-sample effect
    others_after: float | None = None

    @property
    def net(self) -> int:
        """Questions won minus questions lost, over every question."""
        return len(self.fixed) - len(self.broken)

    @property
    def harmful(self) -> bool:
        """Lowers the metric over every question, significantly (paired p < `HARMFUL_P`; SPEC §16)."""
        return self.metric_after < self.metric_before and self.p_value < HARMFUL_P

    def harm_text(self) -> str:
        """The loss in words ('' when not harmful)."""
        if not self.harmful:
            return ""
        return (f"harmful: lowers the metric over every question {self.metric_before:.3f} → {self.metric_after:.3f} "
                f"(p {self.p_value:.3g}); breaks {len(self.broken)}, fixes {len(self.fixed)}")

    def to_json(self) -> dict[str, Any]:
        export = memsense_export(self.config)
        return {"config": to_dict(self.config),
                "changed": {k: {"from": a, "to": b} for k, a, b in ((k, *v) for k, v in self.changed.items())},
                "cases_fixed": list(self.cases_fixed), "fixed": list(self.fixed), "broken": list(self.broken),
                "net": self.net, "harmful": self.harmful,
                "metric_before": self.metric_before, "metric_after": self.metric_after, "p_value": self.p_value,
                "others_before": self.others_before, "others_after": self.others_after,
                "memsense": {"request_options": [e["name"] for e in export["appliesAsIs"]],
                             "needs_code_change": [e["name"] for e in export["needsMemsenseChange"]]}}


HARMFUL_MARK = " (harmful)"


def candidate_name(n: int, c: FixCandidate) -> str:
    """A candidate's name where it is kept (a history run's configs): 'candidate 3', with
    `HARMFUL_MARK` when harmful, so a re-open says so and asks first."""
    return f"candidate {n}{HARMFUL_MARK if c.harmful else ''}"


def offered(result: "FixResult") -> dict[str, Config]:
    """The candidates by `candidate_name`, numbered as listed."""
    return {candidate_name(n, c): c.config for n, c in enumerate(result.candidates, start=1)}


def candidate_order(c: FixCandidate) -> tuple:
    """SPEC §16: not harmful first; then metric over every question (higher first), net questions won,
    chosen cases fixed, fewer knobs changed."""
    return (c.harmful, -c.metric_after, -c.net, -len(c.cases_fixed), len(c.changed))


@dataclass(frozen=True)
class FixResult:
    metric: str
    cases: tuple[str, ...]
    trials: int
    candidates: tuple[FixCandidate, ...]  # in `candidate_order`
    cancelled: bool = False

    @property
    def safe(self) -> tuple[FixCandidate, ...]:
        return tuple(c for c in self.candidates if not c.harmful)

    def verdict(self) -> str:
        """One line: how many candidates, how many harmful, and whether any safe fix was found."""
        if not self.candidates:
            return "no candidate wins any chosen case back"
        harmful = len(self.candidates) - len(self.safe)
        if not self.safe:
            return (f"no safe fix found: all {harmful} candidates lower {self.metric} over every question "
                    f"(paired p < {HARMFUL_P})")
        return (f"{len(self.safe)} safe candidate{'s' if len(self.safe) != 1 else ''}"
                + (f", {harmful} harmful (listed last)" if harmful else ""))

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "cases": list(self.cases), "trials": self.trials, "cancelled": self.cancelled,
                "safe_fix_found": bool(self.safe), "verdict": self.verdict(),
                "candidates": [c.to_json() for c in self.candidates]}


@dataclass(frozen=True)
class _Tried:
    config: Config
    changed: tuple[str, ...]
    cases_fixed: int
    total: float  # the metric summed over every question
    net: int  # questions whose metric rose minus those whose metric fell, over every question
    move: float  # sum over changed knobs of |move| / range


def _changed(start: Config, cfg: Config, knobs: Sequence[Knob]) -> dict[str, tuple[float, float]]:
    return {k.name: (k.get(start), k.get(cfg)) for k in knobs if not math.isclose(k.get(start), k.get(cfg), abs_tol=1e-9)}


def _move(start: Config, cfg: Config, knobs: Sequence[Knob]) -> float:
    return sum(abs(k.get(cfg) - k.get(start)) / (k.high - k.low) for k in knobs)


class _Search:
    """Trials scored on every question; what each did to the chosen cases and to the whole set."""

    def __init__(self, evaluator: Evaluator, start: Config, cases: Sequence[str], knobs: Sequence[Knob]):
        self.evaluator, self.start, self.knobs = evaluator, start, knobs
        self.case_cols = np.array([evaluator.ids.index(c) for c in cases])
        self.before = evaluator.result(evaluator.submit(start))[0]
        self.tried: dict[str, _Tried] = {}

    def score(self, cfg: Config) -> _Tried:
        key = repr(sorted(to_dict(cfg).items(), key=str))
        if key not in self.tried:
            values = self.evaluator.result(self.evaluator.submit(cfg))[0]
            changed = tuple(_changed(self.start, cfg, self.knobs))
            net = int((values > self.before).sum()) - int((values < self.before).sum())
            self.tried[key] = _Tried(cfg, changed, int((values[self.case_cols] > self.before[self.case_cols]).sum()),
                                     float(values.sum()), net, _move(self.start, cfg, self.knobs))
        return self.tried[key]


def _objective(t: _Tried, n_knobs: int) -> float:
    """The metric summed over every question with the chosen cases counted twice, then fewest knobs
    changed, then the smallest move (each tie-break below one question's worth)."""
    return t.total + t.cases_fixed - (len(t.changed) + t.move / (n_knobs + 1)) / (n_knobs + 2)


def _front(tried: Sequence[_Tried]) -> list[_Tried]:
    """Trials that win a chosen case back and that no other such trial beats on (metric over every
    question ↑, chosen cases fixed ↑, knobs changed ↓), in SPEC §16's order (harm is known only
    after `_verify`)."""
    def point(t: _Tried) -> tuple[float, int, int]:
        return (round(t.total, 9), t.cases_fixed, -len(t.changed))

    def dominates(a: _Tried, b: _Tried) -> bool:
        pa, pb = point(a), point(b)
        return all(x >= y for x, y in zip(pa, pb)) and pa != pb

    useful = [t for t in tried if t.cases_fixed > 0]
    front = [t for t in useful if not any(dominates(o, t) for o in useful)]
    best: dict[tuple[float, int, int], _Tried] = {}
    for t in sorted(front, key=lambda t: (-t.net, t.move)):  # one per point of the front
        best.setdefault(point(t), t)
    return sorted(best.values(), key=lambda t: (-t.total, -t.net, -t.cases_fixed, len(t.changed), t.move))


def check_cases(questions: Sequence[Question], cases: Sequence[str]) -> None:
    """Every case must be a judged question of the set (checked before any recall)."""
    if not cases:
        raise MemsenseError("name at least one case (a question id) to fix")
    known = [q.question_id for q in questions]
    unknown = [c for c in cases if c not in set(known)]
    if unknown:
        raise MemsenseError(f"no judged question {', '.join(unknown[:5])}; ids look like {known[0] if known else '?'}")


def find_fixes(pools: Mapping[str, RecallPool], questions: Sequence[Question], cases: Sequence[str],
               start: Config, metric: str = "recall_all@4", trials: int = 200, seed: int = 0,
               knobs: Sequence[Knob] = KNOBS, jobs: int = 1, progress: Progress | None = None,
               cancel: threading.Event | None = None) -> FixResult:
    """Search `trials` configs for ones that win `cases` (question ids) back (module docstring)."""
    base, k = parse_metric(metric)
    name = metric_key(base, k)
    cases = list(dict.fromkeys(cases))  # a case named twice is one case
    check_cases(questions, cases)
    with Evaluator(pools, questions, [(name, k)], jobs) as evaluator:
        search = _Search(evaluator, start, cases, knobs)
        failing = [c for c, col in zip(cases, search.case_cols) if search.before[col] >= 1.0]
        if len(failing) == len(cases):
            raise MemsenseError(f"every case already scores 1 on {name} under the start config: nothing to fix")
        done = _sweep(search, trials, progress, cancel)
        if done < trials and not (cancel is not None and cancel.is_set()):
            done += _tpe(search, trials - done, seed, progress, cancel, done, trials)
    cancelled = cancel is not None and cancel.is_set()
    front = _front(list(search.tried.values()))[:MAX_CANDIDATES]
    base_eval = evaluate_config(pools, questions, start, k)
    verified = [_verify(pools, questions, start, t.config, knobs, cases, name, k, base_eval) for t in front]
    return FixResult(name, tuple(cases), done, tuple(sorted(verified, key=candidate_order)), cancelled)


def _sweep(search: _Search, budget: int, progress: Progress | None, cancel: threading.Event | None) -> int:
    """Each knob alone over `SWEEP_POINTS` values of its range, nearest the start value first."""
    points = [(abs(v - k.get(search.start)) / (k.high - k.low), k, v) for k in search.knobs
              for v in k.grid(SWEEP_POINTS) if not math.isclose(v, k.get(search.start), abs_tol=1e-9)]
    done = 0
    for _, knob, value in sorted(points, key=lambda p: (p[0], p[1].name)):
        if done >= budget or (cancel is not None and cancel.is_set()):
            break
        search.score(knob.set(search.start, value))
        done += 1
        if progress:
            progress(done, budget, "single-knob sweeps")
    return done


def _tpe(search: _Search, budget: int, seed: int, progress: Progress | None,
         cancel: threading.Event | None, offset: int, total: int) -> int:
    optuna.logging.set_verbosity(logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    n_knobs = len(search.knobs)

    def objective(trial: optuna.Trial) -> float:
        cfg = search.start
        for knob in search.knobs:
            if trial.suggest_categorical(f"move:{knob.name}", [False, True]):
                value = (trial.suggest_int(knob.name, int(knob.low), int(knob.high)) if knob.integer else
                         trial.suggest_float(knob.name, knob.low, knob.high, log=knob.log))
                cfg = knob.set(cfg, value)
        return _objective(search.score(cfg), n_knobs)

    done = 0
    for _ in range(budget):
        if cancel is not None and cancel.is_set():
            break
        study.optimize(objective, n_trials=1)
        done += 1
        if progress:
            progress(offset + done, total, "search")
    return done


def _verify(pools: Mapping[str, RecallPool], questions: Sequence[Question], start: Config, cfg: Config,
            knobs: Sequence[Knob], cases: Sequence[str], metric: str, k: int, base_eval) -> FixCandidate:
    """The candidate re-ranked with the plain `rerank` on every question: the figures reported."""
    after = evaluate_config(pools, questions, cfg, k)
    return _candidate(start, cfg, knobs, cases, base_eval.scores(metric), after.scores(metric), metric,
                      base_eval.overall[metric], after.overall[metric])


def _candidate(start: Config, cfg: Config, knobs: Sequence[Knob], cases: Sequence[str], a: Mapping[str, float],
               b: Mapping[str, float], metric: str, before: float, after: float) -> FixCandidate:
    """A config's effect from every question's value under the start (`a`) and under it (`b`), with
    the two means over every question: fixed, broken, the paired p, and the same over all but `cases`."""
    fixed = tuple(q for q in a if b[q] > a[q])
    chosen = set(cases)
    others = [q for q in a if q not in chosen]
    return FixCandidate(cfg, _changed(start, cfg, knobs), tuple(c for c in cases if c in set(fixed)), fixed,
                        tuple(q for q in a if b[q] < a[q]), before, after, compare(a, b, metric).p_value,
                        _mean_of(a, others), _mean_of(b, others))


def _mean_of(scores: Mapping[str, float], ids: Sequence[str]) -> float | None:
    return float(np.mean([scores[q] for q in ids])) if ids else None


def judge(pools: Mapping[str, RecallPool], questions: Sequence[Question], start: Config, configs: Sequence[Config],
          metric: str, knobs: Sequence[Knob] = KNOBS, cases: Sequence[str] = (),
          cancel: threading.Event | None = None) -> list[FixCandidate]:
    """Each config's effect on the whole question set, judged as a fix candidate is (SPEC §16): the
    metric over every question before → after with its paired p (so `harmful`), the questions fixed
    and broken, and the same over every question but `cases` (out of sample). Every figure is a
    re-rank of the cached pools (the batched one: the same values as `rerank`)."""
    base, k = parse_metric(metric)
    name = metric_key(base, k)
    out: list[FixCandidate] = []
    with Evaluator(pools, questions, [(name, k)]) as evaluator:
        ids = evaluator.ids
        a = dict(zip(ids, evaluator.result(evaluator.submit(start))[0].tolist()))
        for cfg in configs:
            if cancel is not None and cancel.is_set():
                raise Cancelled("judging on the question set cancelled")
            b = dict(zip(ids, evaluator.result(evaluator.submit(cfg))[0].tolist()))
            out.append(_candidate(start, cfg, knobs, cases, a, b, name, float(np.mean(list(a.values()))),
                                  float(np.mean(list(b.values())))))
    return out
