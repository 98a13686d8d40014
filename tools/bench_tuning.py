"""Tuning throughput on a real store, every figure beside the pool-by-pool baseline of the same run.

    python tools/bench_tuning.py ../shared/datasets/locomo/locomo-dev.json --store /work/stores/locomo \\
        [--sample 12] [--trials 600] [--jobs N]

Recall runs once per judged question, as deep as `memsense tune` recalls (every value of the
tuned pool limits). Then, on `--sample` random configs of the tuned ranges:
- baseline: `rerank` pool by pool and `question_metrics` question by question (a trial before
  batching);
- batched: `core.evaluation.batch` (every question at once) with the vectorised metrics, in
  this process, and split across `--jobs` worker processes;
every question's metric and tie-break values are checked to be exactly the baseline's.
Finally the whole search, `tune_tpe` with `--trials` trials on every question (sensitivity
sweep off), runs with one job and with `--jobs`: its wall time is the figure the issue asks
for (600 trials on LoCoMo dev in under a minute); beside it, the baseline's time for the same
number of trials (extrapolated from the sample) and Optuna's own share (wall time minus the
scoring the batched sample measured).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder

from core.config import Config  # noqa: E402
from core.evaluation.evaluate import judged_only, recall_depth, recall_pools  # noqa: E402
from core.evaluation.judged import session_qrels  # noqa: E402
from core.evaluation.metrics import question_metrics  # noqa: E402
from core.evaluation.parallel import default_jobs  # noqa: E402
from core.evaluation.study import tune_tpe  # noqa: E402
from core.evaluation.tune import ALL_KNOBS, evaluator_for, knob_depth, metric_pair  # noqa: E402
from core.ingest import load_questions  # noqa: E402
from core.rank.rerank import rerank  # noqa: E402
from core.recall.engine import Engine  # noqa: E402

METRIC = "recall_all@4"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions")
    ap.add_argument("--store", required=True)
    ap.add_argument("--sample", type=int, default=12, help="random configs timed both ways (default 12)")
    ap.add_argument("--trials", type=int, default=600, help="trials of the whole search (default 600; 0 = skip)")
    ap.add_argument("--jobs", type=int, default=default_jobs(), help="worker processes (default: the cores)")
    args = ap.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")
    questions = judged_only(load_questions(Path(args.questions)))
    start = Config()
    depth = max(recall_depth([start]), knob_depth(ALL_KNOBS, start.top_k))
    engine = Engine(args.store)
    try:
        engine.load_model()
        t = time.perf_counter()
        pools = recall_pools(engine.recall, questions, depth)
        recall_s = time.perf_counter() - t
    finally:
        engine.close()
    n = len(questions)
    print(f"{n} questions, recalled {depth} deep in {recall_s:.1f} s (once, before any trial)")
    rng = np.random.default_rng(0)
    cfgs = []
    for _ in range(args.sample):
        cfg = start
        for knob in ALL_KNOBS:
            cfg = knob.set(cfg, knob.draw(rng))
        cfgs.append(cfg)

    name, tiebreak, k = metric_pair(METRIC)
    qrels = [session_qrels(q) for q in questions]
    t = time.perf_counter()
    slow = []
    for cfg in cfgs:
        rows = []
        for q, g in zip(questions, qrels):
            ranking = rerank(pools[q.question_id], cfg)  # its rows are those of the pool at the config's depth
            rows.append(question_metrics([ranking.pool.chunks[r.index].session_number for r in ranking.selected_rows],
                                         g, k))
        slow.append(np.array([[r[name] for r in rows], [r[tiebreak] for r in rows]]))
    base_s = (time.perf_counter() - t) / len(cfgs)
    print(f"baseline, rerank pool by pool: {n / base_s:,.0f} question-trials/s ({base_s * 1e3:.0f} ms a trial)")
    per_trial = {}
    for jobs in sorted({1, args.jobs}):
        t = time.perf_counter()
        with evaluator_for(pools, questions, METRIC, jobs) as ev:
            ready = time.perf_counter() - t
            ev.values(cfgs[0])  # warm
            t = time.perf_counter()
            fast = ev.many(cfgs)
            per_trial[jobs] = (time.perf_counter() - t) / len(cfgs)
        assert all((a == b).all() for a, b in zip(fast, slow)), "batched scores differ from rerank's"
        print(f"batched, {jobs} job{'s' if jobs > 1 else ''}: {n / per_trial[jobs]:,.0f} question-trials/s "
              f"({per_trial[jobs] * 1e3:.1f} ms a trial, {base_s / per_trial[jobs]:.1f}x the baseline; "
              f"set-up {ready:.1f} s); every question scored exactly as the baseline")
    if args.trials > 0:
        print(f"baseline for {args.trials} trials: {args.trials * base_s:.0f} s (from the sample)")
        for jobs in sorted({1, args.jobs}):
            t = time.perf_counter()
            result = tune_tpe(pools, questions, [], metric=METRIC, trials=args.trials, seed=0, start=start,
                              knobs=ALL_KNOBS, sensitivity_points=0, jobs=jobs)
            wall = time.perf_counter() - t
            optuna_s = wall - args.trials * per_trial[jobs]
            print(f"tune_tpe, {args.trials} trials x {n} questions, {jobs} job{'s' if jobs > 1 else ''}: {wall:.1f} s, "
                  f"{args.trials * n / wall:,.0f} question-trials/s ({args.trials * base_s / wall:.1f}x the baseline); "
                  f"Optuna and set-up about {optuna_s:.1f} s; best train {result.best.train:.3f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
