"""`memsense bench`: speed figures for this machine, each against a baseline measured in the
same run. Re-rank of a cached pool vs the naive pure-Python transcription (`core.rank.naive`);
recall latency on a LoCoMo conversation store; ingest of a whole dataset cold and warm.
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.atomic import write_text_atomic

from core.config import Config
from core.rank.naive import naive_rerank, to_lists
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool

SHARED_LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "locomo" / "locomo-dev.json"


def _times_ms(fn: Callable[[], Any], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return out


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine()}


def bench_rerank(sizes=(32, 256, 1024), dim: int = 384) -> list[dict[str, Any]]:
    """Median ms of the full re-rank (fusion, pool, turn support, MMR, explain of the results)
    for a hybrid store (session-first) and a turn-only store (fallback path)."""
    rows = []
    for n in sizes:
        for shape, turns, sessions_first in (("hybrid", 12, True), ("turn-only", 12, False)):
            pool = synthetic_pool(n_sessions=max(n // 8, 2), turns_per_session=turns, dim=dim, seed=n)
            cfg = replace(Config(), candidate_min=n, session_first=sessions_first)
            ranking = rerank(pool, cfg)
            fast = _times_ms(lambda: rerank(pool, cfg).results, 60)  # noqa: B023 (called here, in this iteration)
            lists = to_lists(pool)
            slow = _times_ms(lambda: naive_rerank(lists, cfg),  # noqa: B023 (called here)
                              5 if n >= 1024 else 15)
            rows.append({"candidates": len(ranking.candidates), "store": shape, "mmr_rows": len(ranking.rows),
                         "median_ms": statistics.median(fast), "naive_median_ms": statistics.median(slow),
                         "speedup": statistics.median(slow) / statistics.median(fast)})
    return rows


def bench_store(dataset: Path, progress: bool = True) -> dict[str, Any]:
    from core.recall.engine import Engine, build_store
    from core.ingest import load_questions

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        for label, store in (("cold", Path(tmp) / "cold"), ("warm", Path(tmp) / "warm")):
            stats = build_store(dataset, store, cache_dir=cache)
            out[f"ingest_{label}_s"] = stats.seconds
            out[f"ingest_{label}_embedded"] = stats.texts_embedded
            if progress:
                print(f"  ingest {label}: {stats.seconds:.1f} s, {stats.texts_embedded} texts embedded, "
                      f"{stats.texts_from_cache} from cache", file=sys.stderr)
        engine = Engine(Path(tmp) / "warm", cache_dir=cache)
        try:
            user = engine.users()[0]
            engine.load_model()
            questions = [q.text for q in load_questions(dataset) if q.user_id == user][:200]
            engine.recall(user, questions[0])  # index warm-up, as the app does on opening a user
            lat = [_times_ms(partial(engine.recall, user, q), 1)[0] for q in questions]
            out.update(recall_user=user, recall_queries=len(lat), recall_median_ms=statistics.median(lat),
                       recall_p95_ms=float(np.percentile(lat, 95)))
        finally:
            engine.close()
    return out


def parse_sizes(text: str) -> list[int]:
    from core.cli.arguments import UsageError

    try:
        sizes = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise UsageError(f"--scale {text!r}: give chunk counts separated by commas, e.g. --scale 2000,10000,30000")
    return sizes


def load_average() -> tuple[float, float, float] | None:
    """The 1, 5 and 15-minute load averages, or None where the platform keeps none (Windows):
    written as null, "not measured here", never as a made-up number."""
    getloadavg = getattr(os, "getloadavg", None)
    try:
        return getloadavg() if getloadavg is not None else None
    except OSError:  # a Unix without the figure
        return None


def main_scale(args: Any) -> Any:
    from core.cli.arguments import UsageError
    from core.cli.bench_scale import bench_size, print_row

    sizes, users = parse_sizes(args.scale), int(getattr(args, "users", None) or 1)
    if users < 1:
        raise UsageError("--users must be at least 1")
    rows, load_before = [], load_average()
    for n in sizes:
        rows.append(bench_size(n, users))
        if not getattr(args, "json", False):
            print_row(rows[-1])
    if getattr(args, "out", None):
        write_text_atomic(args.out, json.dumps({"machine": machine(), "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                                                "load_average_before_after": [load_before, load_average()],
                                                "scale": rows}, indent=2) + "\n", what="benchmark output")
    return rows if getattr(args, "json", False) else None


def bench_tuning(questions: int = 200, trials: int = 8) -> dict[str, Any]:
    """Question-trials per second of tuning's inner loop: `rerank` pool by pool against the
    batched re-rank of every question at once (`core.evaluation.batch`), same pools and configs,
    checked to select the same sessions."""
    from core.evaluation.batch import PoolBatch

    pools = [synthetic_pool(n_sessions=24, turns_per_session=14, dim=384, seed=s) for s in range(questions)]
    rng = np.random.default_rng(0)
    cfgs = [replace(Config(), rrf_k=float(rng.uniform(1, 60)), mmr_lambda=float(rng.uniform(0.3, 1)),
                    top_k=int(rng.integers(2, 10))) for _ in range(trials)]
    batch = PoolBatch(pools)
    t = time.perf_counter()
    fast = [batch.selected_sessions(c) for c in cfgs]
    batched = time.perf_counter() - t
    t = time.perf_counter()
    slow = [[[k.pool.chunks[r.index].session_number for r in k.selected_rows] for k in (rerank(p, c) for p in pools)]
            for c in cfgs]
    loop = time.perf_counter() - t
    if fast != slow:
        raise RuntimeError("batched re-rank selected other sessions than rerank")
    n = questions * trials
    return {"questions": questions, "trials": trials, "rows_per_pool": pools[0].size, "rerank_per_s": n / loop,
            "batched_per_s": n / batched, "speedup": loop / batched}


def main(args: Any = None) -> dict[str, Any] | None:
    if getattr(args, "scale", None):
        return main_scale(args)
    quick = bool(getattr(args, "quick", False))
    dataset = Path(getattr(args, "dataset", None) or SHARED_LOCOMO)
    report: dict[str, Any] = {"machine": machine(), "when": time.strftime("%Y-%m-%d %H:%M:%S"), "rerank": bench_rerank()}
    print("re-rank of a cached pool (median ms; naive pure-Python transcription in the same run)")
    for r in report["rerank"]:
        print(f"  {r['candidates']:>5} candidates, {r['store']:<9} store ({r['mmr_rows']:>4} MMR rows): "
              f"{r['median_ms']:7.3f} ms   naive {r['naive_median_ms']:9.2f} ms   {r['speedup']:6.1f}x")
    report["tuning"] = t = bench_tuning()
    print(f"tuning's inner loop ({t['questions']} pools of {t['rows_per_pool']} rows x {t['trials']} configs): "
          f"batched {t['batched_per_s']:.0f} question-trials/s, rerank pool by pool {t['rerank_per_s']:.0f} ({t['speedup']:.1f}x)")
    if not quick:
        if not dataset.exists():
            print(f"  (no dataset at {dataset}: recall and ingest figures skipped; pass --dataset)")
        else:
            report["store"] = bench_store(dataset)
            s = report["store"]
            print(f"recall on {s['recall_user']} ({s['recall_queries']} questions): median {s['recall_median_ms']:.1f} ms, "
                  f"p95 {s['recall_p95_ms']:.1f} ms")
            print(f"ingest of {dataset.name}: cold {s['ingest_cold_s']:.1f} s, warm {s['ingest_warm_s']:.1f} s")
    if getattr(args, "out", None):
        write_text_atomic(args.out, json.dumps(report, indent=2) + "\n", what="benchmark output")
    return report if getattr(args, "json", False) else None


if __name__ == "__main__":
    main()
