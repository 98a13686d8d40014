"""Tuning throughput on a real store: question-trials per second of `rerank` pool by pool beside
the batched re-rank of every question at once (`core.evaluation.batch`), in one run.

    python tools/bench_tuning.py --store stores/locomo ../shared/datasets/locomo/locomo-dev.json [--trials 12]

Recall runs once per judged question (as evaluation and tuning do); then each of `--trials`
random RRF configs is re-ranked both ways and the selected sessions are checked to be equal.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder

from core.config import MAX_ROUTE_DEPTH, Config  # noqa: E402
from core.evaluation.batch import PoolBatch  # noqa: E402
from core.evaluation.evaluate import judged_only, recall_pools  # noqa: E402
from core.ingest import load_questions  # noqa: E402
from core.rank.rerank import rerank  # noqa: E402
from core.recall.engine import Engine  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions")
    ap.add_argument("--store", required=True)
    ap.add_argument("--trials", type=int, default=12)
    args = ap.parse_args()
    questions = judged_only(load_questions(Path(args.questions)))
    engine = Engine(args.store)
    try:
        engine.load_model()
        pools = recall_pools(engine.recall, questions, MAX_ROUTE_DEPTH)
    finally:
        engine.close()
    ordered = [pools[q.question_id] for q in questions]
    rng = np.random.default_rng(0)
    cfgs = [replace(Config(), rrf_k=float(rng.uniform(1, 60)), mmr_lambda=float(rng.uniform(0.3, 1)),
                    alpha=float(rng.uniform(0, 0.3)), top_k=int(rng.integers(2, 10))) for _ in range(args.trials)]
    batch = PoolBatch(ordered)
    t = time.perf_counter()
    fast = [batch.selected_sessions(c) for c in cfgs]
    batched = time.perf_counter() - t
    t = time.perf_counter()
    slow = [[[p.chunks[r.index].session_number for r in rerank(p, c).selected_rows] for p in ordered] for c in cfgs]
    loop = time.perf_counter() - t
    assert fast == slow, "batched re-rank selected other sessions than rerank"
    n = len(ordered) * len(cfgs)
    print(f"{len(ordered)} questions x {len(cfgs)} configs: rerank pool by pool {n / loop:.0f} question-trials/s, "
          f"batched {n / batched:.0f} ({loop / batched:.1f}x); 600 trials would take {600 * batched / len(cfgs):.0f} s "
          f"(pool by pool {600 * loop / len(cfgs):.0f} s)")


if __name__ == "__main__":
    main()
