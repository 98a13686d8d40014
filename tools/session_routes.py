"""Measure the session routes and selection by session on LoCoMo dev (issue 22's table).

    PYTHONPATH=. python tools/session_routes.py [--store /work/stores/locomo] [--dataset ../shared/datasets/locomo/locomo-dev.json]

Recalls every judged question (categories 1-4 with evidence) once per recall variant (session
dense aggregation; analyzer of the chunk-level BM25 and of the session BM25), re-ranks each
config on those pools and prints, per config, recall_any@4, recall_all@4, multi-hop
recall_all@4 and the paired sign-flip test (10,000 flips, two-sided) of recall_all@4 against
the `memsense` preset on the same questions.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from core.config import Config
from core.config.presets import BUILTIN, only
from core.evaluation.evaluate import evaluate_config, judged_only, recall_pools
from core.evaluation.judged import load_question_set
from core.evaluation.metrics import sign_flip_p
from core.recall.engine import Engine

K = 4
PLAIN: dict[str, Any] = dict(alpha=0.0, mmr_lambda=1.0, duplicate_threshold=1.0, turn_support_cap=0.0)
VARIANTS: dict[str, dict[str, Any]] = {  # recall variant -> Engine options
    "max": dict(session_dense="max"),
    "mean": dict(session_dense="mean"),
    "top2": dict(session_dense="top2"),
    "plain-sessions": dict(session_analyzer="plain"),
    "english-chunks": dict(analyzer_name="english"),
}


def configs() -> list[tuple[str, str, Config]]:
    """(label, recall variant, config)."""
    ms = BUILTIN["memsense"]
    alone: dict[str, Any] = dict(distinct_sessions=True, **PLAIN)
    out = [("preset memsense", "max", ms),
           ("preset bm25_only", "max", BUILTIN["bm25_only"]),
           ("memsense, selection by session", "max", replace(ms, distinct_sessions=True)),
           ("bm25_only, chunk analyzer english", "english-chunks", BUILTIN["bm25_only"]),
           ("session_lexical alone, plain analyzer, by session", "plain-sessions",
            Config(route_weights=only(session_lexical=1.0), **alone)),
           ("session_lexical alone, english analyzer, by session", "max", Config(route_weights=only(session_lexical=1.0), **alone))]
    for agg in ("max", "mean", "top2"):
        out.append((f"session_dense alone ({agg}), by session", agg, Config(route_weights=only(session_dense=1.0), **alone)))
    out += [("RRF k 10: session_lexical + lexical + vec_full, by session", "english-chunks",
             Config(rrf_k=10.0, route_weights=only(session_lexical=1.0, lexical=1.0, vec_full=1.0), **alone)),
            ("memsense + session_lexical 3, by session", "max",
             replace(ms.with_weights(session_lexical=3.0), distinct_sessions=True)),
            ("preset sessions (chunk analyzer plain)", "max", BUILTIN["sessions"]),
            ("preset sessions, --analyzer english", "english-chunks", BUILTIN["sessions"])]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=Path("/work/stores/locomo"))
    ap.add_argument("--dataset", type=Path, default=Path("../shared/datasets/locomo/locomo-dev.json"))
    args = ap.parse_args(argv)
    questions = judged_only(load_question_set(args.dataset))
    table = configs()
    pools, ms_per_query = {}, {}
    for variant in sorted({v for _, v, _ in table}):
        engine = Engine(args.store, **VARIANTS[variant])
        try:
            for user in sorted({q.user_id for q in questions}):
                engine.recall(user, "warm up")  # each user's indexes built before the clock starts
            t0 = time.perf_counter()
            pools[variant] = recall_pools(engine.recall, questions, 64)
            ms_per_query[variant] = (time.perf_counter() - t0) * 1e3 / len(questions)
        finally:
            engine.close()
    base = evaluate_config(pools["max"], questions, BUILTIN["memsense"], K, "memsense")
    base_all = np.array([o.metrics[f"recall_all@{K}"] for o in base.outcomes])
    print(f"{len(questions)} questions; recall ms/query (embedding cached, session routes on): "
          + ", ".join(f"{v} {ms:.1f}" for v, ms in ms_per_query.items()))
    print(f"| config | any@{K} | all@{K} | multi-hop all@{K} | Δ all@{K} vs memsense | won / lost | p |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, variant, cfg in table:
        t0 = time.perf_counter()
        ev = evaluate_config(pools[variant], questions, cfg, K, label)
        every = np.array([o.metrics[f"recall_all@{K}"] for o in ev.outcomes])
        d = every - base_all
        p = sign_flip_p(d)
        print(f"| {label} | {ev.overall[f'recall_any@{K}']:.3f} | {ev.overall[f'recall_all@{K}']:.3f} | "
              f"{ev.per_category[1][f'recall_all@{K}']:.3f} | {d.mean():+.3f} | {(d > 0).sum()} / {(d < 0).sum()} | "
              f"{p:.4f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
