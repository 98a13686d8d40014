"""The runs over a workspace's question set: evaluate, compare, diagnose, fix, tune, impact and report.

Each takes a `Workspace` and a `QuestionSet`, recalls what the workspace has not recalled yet (at the depth
its configs need), re-ranks, and keeps the run in the store's history when it is one the history keeps:
what it returns carries its `Kept` entry. The command line and the app call these and only print or show
what comes back; the summaries a run keeps are written here, once.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from core.config import Config
from core.evaluation.diagnose import Diagnosis, chunks_of_pools
from core.evaluation.diagnose import diagnose as diagnose_pools
from core.evaluation.evaluate import PresetEvaluation, evaluate_config, evaluate_presets
from core.evaluation.fix import FixResult, find_fixes
from core.evaluation.fix import offered as offered_configs
from core.evaluation.metrics import parse_metric
from core.evaluation.tune import ALL_KNOBS, Knob
from core.evaluation.workspace import Kept, Progress, QuestionSet, Workspace, pools_at
from core.records import Question

NOT_KEPT = Kept(None, "not kept")
"""The entry of a run the history does not keep (a judge run, the app's row of the current settings, its
re-diagnosis after a settings change)."""


@dataclass(frozen=True)
class Evaluated:
    """Every preset's metrics on the question set, and a word on gold sessions the store lacks."""

    results: list[PresetEvaluation]
    missing_note: str
    kept: Kept


@dataclass(frozen=True)
class Compared:
    a: PresetEvaluation
    b: PresetEvaluation
    summary: dict[str, Any]
    """Metric -> `core.evaluation.metrics.compare`'s comparison of A and B."""
    kept: Kept


@dataclass(frozen=True)
class DiagnoseRun:
    config: Config
    questions: tuple[Question, ...]
    diagnosis: Diagnosis
    run_id: int | None  # its history entry: the run kept,
    history_note: str  # or why it was not ("" when it was)


@dataclass(frozen=True)
class FixRun:
    start: Config
    result: FixResult
    questions: int
    run_id: int | None
    history_note: str
    seconds: float = 0.0  # the search's (its recall and the history's keeping aside)


def eval_summary(results: Sequence[PresetEvaluation]) -> dict[str, Any]:
    return {r.preset: dict(r.overall) for r in results}


def evaluate(ws: Workspace, qs: QuestionSet, presets: Mapping[str, Config], k: int, *, keep: bool = True,
             progress: Progress | None = None, cancel: threading.Event | None = None,
             rank_progress: Progress | None = None) -> Evaluated:
    """Every preset on the question set (`evaluate_presets`); kept as an "eval" run with `keep`. `progress`
    follows the recall, `rank_progress` the re-ranking."""
    pools = ws.pools(qs, presets.values(), progress=progress, cancel=cancel)
    note = ws.missing_gold_note(qs, pools)
    results = evaluate_presets(pools, qs.questions, presets, k, rank_progress, cancel)
    kept = ws.keep("eval", qs.path, {r.preset: r.config for r in results}, {r.preset: r for r in results},
                   eval_summary(results)) if keep else NOT_KEPT
    return Evaluated(results, note, kept)


def keep_evaluation(ws: Workspace, dataset: str | Path, results: Sequence[PresetEvaluation]) -> Kept:
    """Keep an evaluation made before (`evaluate(keep=False)`) of the questions of `dataset` as an "eval" run."""
    return ws.keep("eval", dataset, {r.preset: r.config for r in results}, {r.preset: r for r in results},
                   eval_summary(results))


def compare(ws: Workspace, qs: QuestionSet, a: tuple[str, Config], b: tuple[str, Config], k: int, metric: str,
            test: str, progress: Progress | None = None) -> tuple[Compared, str]:
    """A against B question by question on every metric at `k` (`core.evaluation.metrics.compare`), kept as a
    "compare" run whose summary is `metric`'s; and the missing-gold note."""
    from core.evaluation.metrics import compare as compare_scores
    from core.evaluation.metrics import metric_names

    (name_a, cfg_a), (name_b, cfg_b) = a, b
    pools = ws.pools(qs, (cfg_a, cfg_b), progress=progress)
    note = ws.missing_gold_note(qs, pools)
    ev_a, ev_b = evaluate_presets(pools, qs.questions, {name_a: cfg_a, name_b: cfg_b}, k)
    summary = {m: compare_scores(ev_a.scores(m), ev_b.scores(m), m, test) for m in metric_names(k)}
    kept = ws.keep("compare", qs.path, {name_a: cfg_a, name_b: cfg_b}, {name_a: ev_a, name_b: ev_b},
                   {"metric": metric, "delta": summary[metric].delta, "p_value": summary[metric].p_value})
    return Compared(ev_a, ev_b, summary, kept), note


def diagnose(ws: Workspace, qs: QuestionSet, cfg: Config, name: str, progress: Progress | None = None,
             cancel: threading.Event | None = None, rank_progress: Progress | None = None, *,
             keep: bool = True) -> tuple[DiagnoseRun, Kept, str]:
    """Where each gold session is lost under `cfg` (SPEC §13), kept as a "diagnose" run with `keep` (the app's
    re-diagnosis that follows a settings change is not): the store's pools (they carry their users' chunks),
    each question re-ranked once; its history entry (the run carries it as `run_id` and `history_note`) and
    the missing-gold note. `progress` follows the recall, `rank_progress` the re-ranking."""
    recalled = ws.pools(qs, [cfg], progress=progress, cancel=cancel)
    note = ws.missing_gold_note(qs, recalled)
    result = diagnose_pools(pools_at(recalled, cfg.route_limit), qs.questions, cfg, None, rank_progress, cancel,
                            name=name)
    assert result.evaluation is not None
    kept = ws.keep("diagnose", qs.path, {name: cfg}, {name: result.evaluation},
                   {"k": result.k, "gold_sessions": len(result.items), "stages": result.stages},
                   hinted=False) if keep else NOT_KEPT
    return DiagnoseRun(cfg, qs.questions, result, kept.run_id, kept.note), kept, note


def fix(ws: Workspace, qs: QuestionSet, start: tuple[str, Config], cases: Sequence[str], metric: str, trials: int,
        seed: int, *, jobs: int = 1, progress: Progress | None = None,
        cancel: threading.Event | None = None) -> tuple[FixRun, Kept, str]:
    """Configs that win `cases` back from `start` (`find_fixes`), every figure re-ranked on every question,
    kept as a "fix" run with each candidate scored on every question; and the missing-gold note. A cancelled
    search returns (and keeps) what it found so far. Diagnose and fix runs of a store whose model cannot be
    read are not kept (a note says so), as they never were; evaluations and tunes name the engine's model."""
    name, cfg = start
    pools = ws.pools(qs, [cfg], progress=progress, cancel=cancel)
    note = ws.missing_gold_note(qs, pools)
    questions = list(qs.questions)
    started = time.perf_counter()
    result = find_fixes(pools, questions, list(cases), cfg, metric, trials, seed, jobs=jobs, progress=progress,
                        cancel=cancel)
    seconds = time.perf_counter() - started
    configs = {name: cfg, **offered_configs(result)}
    kept = ws.keep("fix", qs.path, configs, {n: evaluate_config(pools, questions, c, cfg.top_k) for n, c in configs.items()},
                   {"metric": result.metric, "cases": list(result.cases), "trials": result.trials,
                    "candidates": [{"cases_fixed": len(c.cases_fixed), "fixed": len(c.fixed), "broken": len(c.broken),
                                    "net": c.net, "harmful": c.harmful, "metric_after": c.metric_after}
                                   for c in result.candidates]}, hinted=False)
    return FixRun(cfg, result, len(questions), kept.run_id, kept.note, seconds), kept, note


def tune_summary(result: Any) -> dict[str, Any]:
    """What a kept "tune" run says of its search: a split's train and test figures, or a cross-validation's
    folds and verdict."""
    if hasattr(result, "folds"):  # a CrossValidation
        return {"metric": result.metric, "folds": len(result.folds), "verdict": result.verdict()}
    return {"metric": result.metric, "train": result.best.train, "test": result.best.test, "split": "users"}


def keep_tune(ws: Workspace, qs: QuestionSet, configs: Mapping[str, Config], result: Any,
              progress: Progress | None = None, cancel: threading.Event | None = None) -> Kept:
    """Keep a tune run: `configs` (the start and what the search offers) scored on every question of the set."""
    k = parse_metric(result.metric)[1]
    pools = ws.pools(qs, configs.values(), progress=progress, cancel=cancel)
    return ws.keep("tune", qs.path, configs, {n: evaluate_config(pools, qs.questions, c, k) for n, c in configs.items()},
                   tune_summary(result))


Search = Callable[..., Any]


def tune_split(ws: Workspace, qs: QuestionSet, train: Sequence[Question], test: Sequence[Question], search: Search,
               start: Config, *, depth_configs: Sequence[Config] = (), knobs: Sequence[Knob] = ALL_KNOBS,
               progress: Progress | None = None, cancel: threading.Event | None = None,
               **options: Any) -> tuple[Any, dict[str, Any]]:
    """A search (`tune` or `tune_tpe`) from `start` over `knobs` on `train`, reported on `test`; and the pools
    it ran on (deep enough for `depth_configs` too), for figures beside it."""
    pools = ws.pools(qs, [start, *depth_configs], tune_from=start, knobs=knobs, progress=progress, cancel=cancel)
    result = search(pools, list(train), list(test), start=start, knobs=knobs, progress=progress, cancel=cancel,
                    **options)
    return result, pools


def cross_validate(ws: Workspace, qs: QuestionSet, train: Sequence[Question], search: Search, search_name: str,
                   start: Config, presets: Mapping[str, Config], *, test: Sequence[Question] = (),
                   knobs: Sequence[Knob] = ALL_KNOBS, progress: Progress | None = None,
                   cancel: threading.Event | None = None, **options: Any) -> Any:
    """k-fold cross-validation by user (`core.evaluation.cv.cross_validate`) of `search` from `start`, choosing
    among the start, `presets` and the search; `test`: users kept out of all of it."""
    from core.evaluation.cv import cross_validate as cv

    pools = ws.pools(qs, [start, *presets.values()], tune_from=start, knobs=knobs, progress=progress, cancel=cancel)
    return cv(pools, list(train), search, search_name, start=start, presets=presets, test=list(test), knobs=knobs,
              progress=progress, cancel=cancel, **options)


def scores(pools: Mapping[str, Any], questions: Sequence[Question], cfg: Config, k: int, metric: str) -> float:
    """`cfg`'s mean `metric` at `k` on `questions` (pools from `tune_split`)."""
    return evaluate_config(pools, questions, cfg, k).overall[metric]


def report(ws: Workspace, qs: QuestionSet, a: tuple[str, Config], b: tuple[str, Config], k: int,
           dataset: str, progress: Progress | None = None, cancel: threading.Event | None = None) -> str:
    """The HTML report of A and B on the question set (`core.evaluation.report.report`), every user's chunks
    as the pools carry them."""
    from core.evaluation.history import store_label
    from core.evaluation.report import report as render, report_configs

    pools = ws.pools(qs, report_configs(a[1], b[1], k), progress=progress, cancel=cancel)
    return render(pools, qs.questions, a, b, k, chunks_of_pools(pools, qs.questions), store_label(ws.location),
                  dataset, ws.model_name())


def impact(ws: Workspace, queries: Sequence[Any], cfg_a: Config, cfg_b: Config, progress: Progress | None = None,
           cancel: threading.Event | None = None, keep_partial: bool = False) -> Any:
    """What B changes against A on queries nobody judged (`core.evaluation.impact`): each query recalled once
    (its text embedded in one batch first when the workspace can), ranked under both. Cancelled: `Cancelled`,
    or with `keep_partial` (once the texts are embedded) the impact of the queries done by then."""
    from core.errors import MemsenseError
    from core.evaluation.impact import impact as compare_queries

    unknown = sorted({q.user_id for q in queries} - set(ws.users))
    if unknown:
        raise MemsenseError(f"the store has no user {', '.join(unknown[:5])}; the queries name users of another store?")
    ws.embed([q.text for q in queries], progress, cancel, "embed queries")  # one batch: each recall reads the cache

    def recall(user_id: str, text: str, depth: int) -> Any:
        return ws.recall_one(user_id, text, depth, cancel)

    return compare_queries(recall, queries, cfg_a, cfg_b, progress,
                           cancelled=(lambda: cancel.is_set()) if cancel is not None else None, keep_partial=keep_partial)
