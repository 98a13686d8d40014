"""Write docs/CROSS-VALIDATION.md: tuning judged on users it never saw (SPEC §12), with the
Optuna TPE search and the local search on the same budget, beside BM25 over whole sessions
(SPEC §8). Every figure is computed here.

    python -m tools.cv_report [--dataset ../shared/datasets/locomo/locomo-dev.json]
        [--store /tmp/locomo-store] [--folds 5] [--trials 100] [--searches tpe,local]
        [--pools-cache /tmp/locomo-pools.pkl] [--out docs/CROSS-VALIDATION.md]

Recall runs once per question (as deep as the tuned pool limits need); with --pools-cache the
pools are kept in that file (outside the repository: it holds dataset text) for the next run.
The searches run side by side in worker processes over the same pools, folds and seed.
"""
from __future__ import annotations

import argparse
import copyreg
import multiprocessing
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType

import numpy as np

from core import config as config_io
from core.config import Config
from core.evaluation.cv import CrossValidation, bootstrap_ci, cross_validate
from core.evaluation.evaluate import evaluate_config, judged_only, recall_pools
from core.evaluation.judged import load_question_set
from core.evaluation.study import tune_tpe
from core.evaluation.tune import ALL_KNOBS, knob_depth, seed_presets, tune
from tools.evaluate_report import DEFAULT_DATASET, ROOT, YARDSTICK, build_if_missing, whole_session_bm25

SEARCHES = {"tpe": tune_tpe, "local": tune}


def _proxy(items: dict) -> MappingProxyType:
    return MappingProxyType(items)


copyreg.pickle(MappingProxyType, lambda m: (_proxy, (dict(m),)))  # configs cross process boundaries
_POOLS: dict = {}
_QUESTIONS: list = []


def _pools(args: argparse.Namespace):
    if args.pools_cache and args.pools_cache.exists():
        with args.pools_cache.open("rb") as fh:
            return pickle.load(fh)
    from core.recall.engine import Engine

    build_if_missing(args.dataset, args.store)
    questions = judged_only(load_question_set(args.dataset))
    engine = Engine(args.store)
    try:
        pools = recall_pools(lambda u, q, d: engine.recall(u, q, depth=d), questions, knob_depth(ALL_KNOBS, 4))
    finally:
        engine.close()
    if args.pools_cache:
        with args.pools_cache.open("wb") as fh:
            pickle.dump((questions, pools), fh)
    return questions, pools


def _run(job: tuple[str, str, int, int, int]) -> tuple[str, CrossValidation, float]:
    name, metric, folds, trials, seed = job
    t0 = time.perf_counter()
    cv = cross_validate(_POOLS, _QUESTIONS, SEARCHES[name], name, metric=metric, folds=folds, trials=trials,
                        seed=seed, start=Config(), seeds=seed_presets(Config()), knobs=ALL_KNOBS,
                        sensitivity_points=0, progress=_stage_lines(name, t0))
    return name, cv, time.perf_counter() - t0


def _stage_lines(name: str, t0: float):
    """Progress on stderr: one line per fold (and the final run) as it starts, with the time so far."""
    seen: set[str] = set()

    def report(_done: int, _total: int, message: str) -> None:
        stage = message.split(":", 1)[0]
        if stage not in seen:
            seen.add(stage)
            print(f"{name}: {stage} after {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    return report


def _table(header, rows) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def held_out_scores(cv: CrossValidation, k: int = 4) -> dict[str, dict[str, float]]:
    """Metric -> question id -> value, each question scored by the winner of the fold that held it out."""
    scores: dict[str, dict[str, float]] = {}
    for f in cv.folds:
        held = [q for q in _QUESTIONS if q.user_id in f.held_users]
        for o in evaluate_config(_POOLS, held, f.tuned, k).outcomes:
            for m, v in o.metrics.items():
                scores.setdefault(m, {})[o.question_id] = v
    return scores


def held_out_metrics(cv: CrossValidation, k: int = 4) -> dict[str, float]:
    """Every metric, each question scored by the winner of the fold that held it out."""
    return {m: float(np.mean(list(v.values()))) for m, v in held_out_scores(cv, k).items()}


def versus(scores: dict[str, dict[str, float]], reference, metric: str, seed: int = 0) -> tuple[float, float, float]:
    """Mean per-question difference (tuned − reference) of `metric` on the same questions, with its
    95 % paired percentile bootstrap interval."""
    theirs = reference.scores(metric)
    diff = np.array([v - theirs[q] for q, v in scores[metric].items()])
    lo, hi = bootstrap_ci(diff, seed)
    return float(diff.mean()), lo, hi


def render(args, runs, reference, start) -> str:
    k = 4
    any_, all_ = f"recall_any@{k}", f"recall_all@{k}"
    users = sorted({q.user_id for q in _QUESTIONS})
    lines = ["# Cross-validated tuning on LoCoMo (dev half)", "",
             f"Generated by `python -m tools.cv_report {args.command}` on {datetime.now(timezone.utc):%Y-%m-%d}; "
             "every figure is "
             "computed by that script (run it again rather than editing).", "",
             f"- {len(_QUESTIONS)} questions of {len(users)} conversations ({', '.join(users)}), session level, k = {k}.",
             f"- {args.folds}-fold cross-validation by user (`core.evaluation.cv`): each fold's search sees only "
             "the other conversations; its winner is scored on the held-out conversation. Each question is scored "
             "once, by a config tuned without its conversation.",
             f"- Both searches get the same budget: {args.trials} trials per fold, seed {args.seed}, the same start "
             "(Memsense's defaults) and warm start (the built-in RRF presets), every knob of `core.evaluation.tune.ALL_KNOBS` "
             "(route weights, k, alpha, lambda, duplicate threshold, turn support, tag weight, pool limits).", "",
             "## Cross-validated figures beside the yardstick", ""]
    rows = [[f"tuned, {name} search (cross-validated)", f"{m[any_]:.3f}", f"{m[all_]:.3f}"] for name, (cv, _, m) in runs.items()]
    rows += [["`memsense` defaults (the start)", f"{start.overall[any_]:.3f}", f"{start.overall[all_]:.3f}"],
             ["BM25 over whole sessions (rebuilt here)", f"{reference.overall[any_]:.3f}", f"{reference.overall[all_]:.3f}"]]
    a, b = YARDSTICK["BM25 over whole sessions"]
    rows.append(["BM25 over whole sessions (SPEC §8)", f"{a:.3f}", f"{b:.3f}"])
    lines += _table(["", any_, all_], rows) + [""]
    for name, (cv, _, _) in runs.items():
        scores = held_out_scores(cv, k)
        parts = []
        for metric in (any_, all_):
            d, lo, hi = versus(scores, reference, metric, args.seed)
            verdict = "above it" if lo > 0 else "below it" if hi < 0 else "level: the interval includes zero"
            parts.append(f"`{metric}` {d:+.3f}, 95 % paired bootstrap CI {lo:+.3f} to {hi:+.3f} ({verdict})")
        lines += [f"Tuned by the {name} search minus BM25 over whole sessions, question by question on the same "
                  f"{len(scores[all_])} questions: " + "; ".join(parts) + ".", ""]
    for name, (cv, seconds, _) in runs.items():
        sd, lo, hi = cv.held_spread
        clo, chi = cv.gain_ci
        lines += [f"## {name} search", "", *_table(
            ["fold", "held-out", "train", "held-out " + cv.metric, "start, held-out", "gain"],
            [[str(f.number), ", ".join(f.held_users), f"{f.train:.3f}", f"{f.held:.3f}", f"{f.start_held:.3f}",
              f"{f.gain:+.3f}"] for f in cv.folds]), "",
            f"Mean train figure {np.mean([f.train for f in cv.folds]):.3f}; held-out spread: sd {sd:.3f}, "
            f"min {lo:.3f}, max {hi:.3f}. Cross-validated `{cv.metric}` {cv.cv_metric:.3f} against the start's "
            f"{cv.start_metric:.3f}: gain {cv.gain:+.3f}, 95 % bootstrap CI {clo:+.3f} to {chi:+.3f} "
            f"({cv.questions} questions). {cv.verdict().split(':')[0].capitalize()}.", "",
            f"Time: {seconds:.0f} s for {args.folds} folds and the final run on every conversation "
            f"({(args.folds + 1) * args.trials} trials).", ""]
        if cv.best is not None:
            lines += ["Offered config (the same search on all five conversations, train "
                      f"{cv.final.best.train:.3f}):", "", "```toml", config_io.dumps(cv.best, "toml").rstrip(), "```", ""]
        if cv.final.importances:
            top = sorted(cv.final.importances.items(), key=lambda kv: -kv[1])[:8]
            lines += ["Parameter importances of the final study (fANOVA, share of the train objective's variance): "
                      + ", ".join(f"`{n}` {v:.2f}" for n, v in top) + ".", ""]
    if len(runs) == 2:
        (n1, (c1, _, _)), (n2, (c2, _, _)) = runs.items()
        diff = c1.cv_metric - c2.cv_metric
        tr = np.mean([f.train for f in c1.folds]) - np.mean([f.train for f in c2.folds])
        lines += ["## The two searches on the same budget", "",
                  f"{n1} minus {n2}: cross-validated `{c1.metric}` {diff:+.3f}, mean train figure {tr:+.3f}.", ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    p.add_argument("--store", type=Path, default=Path("/tmp/locomo-store"))
    p.add_argument("--pools-cache", type=Path)
    p.add_argument("--runs-cache", type=Path, help="keep the searches' results here; render from it when it exists")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--metric", default="recall_all@4")
    p.add_argument("--searches", default="tpe,local")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "CROSS-VALIDATION.md")
    args = p.parse_args(argv)
    args.command = " ".join(sys.argv[1:] if argv is None else argv)
    if not (args.pools_cache and args.pools_cache.exists()) and not args.dataset.exists():
        p.error(f"{args.dataset} does not exist: pass --dataset (the LoCoMo dev file of ../shared)")
    questions, pools = _pools(args)
    _QUESTIONS[:] = questions
    _POOLS.update(pools)
    names = [s for s in args.searches.split(",") if s]
    jobs = [(n, args.metric, args.folds, args.trials, args.seed) for n in names]
    if args.runs_cache and args.runs_cache.exists():
        with args.runs_cache.open("rb") as fh:
            done = pickle.load(fh)
    else:
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("fork")) as ex:
            done = {name: (cv, secs) for name, cv, secs in ex.map(_run, jobs)}
        if args.runs_cache:
            with args.runs_cache.open("wb") as fh:
                pickle.dump(done, fh)
    runs = {n: (cv, secs, held_out_metrics(cv)) for n, (cv, secs) in done.items()}
    reference = whole_session_bm25(args.dataset, _QUESTIONS)
    start = evaluate_config(_POOLS, _QUESTIONS, Config())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(args, runs, reference, start), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
