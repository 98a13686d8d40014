"""What the UI thread pays when a pinned baseline needs deeper route lists than a fresh pool holds.

    python tools/bench_deepen_ui.py [--chunks 30000] [--queries 15]

Over a synthetic store of one user (random vectors, no model), for each of `--queries` fresh
queries recalled for the default settings, with a baseline pinned at top_k 50 (route lists 400
deep where the settings need 64):
- before, in the same run: the UI thread's work when it ranked the baseline itself, the
  settings' re-rank plus `rerank(pool, baseline)` deepening the pool there;
- now: `QuerySession.set_pool` on the UI thread (the settings' re-rank, the deepening handed to
  the worker), and the wall time until the baseline is ranked (`pool_deepened`);
- for scale: the settings' re-rank alone (no baseline pinned).
Prints medians and p95s in milliseconds with the ratio, and the machine's load average.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def _line(name: str, values: list[float]) -> str:
    return f"{name:<58} median {statistics.median(values):8.2f} ms   p95 {_p95(values):8.2f} ms"


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=30_000)
    parser.add_argument("--queries", type=int, default=15)
    args = parser.parse_args(argv)

    from PySide6.QtCore import QCoreApplication

    from core.config import Config
    from core.rank.rerank import rerank
    from core.recall.pool import deepen
    from memsense_gui.state.current_settings import CurrentSettings
    from memsense_gui.state.session import QuerySession
    from tools.bench_gui import _wait, synthetic_engine, synthetic_store

    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    location, user = synthetic_store(args.chunks)
    engine = synthetic_engine(location)
    settings, baseline = Config(), replace(Config(), top_k=50)
    queries = [f"w{i} w{i + 7} w{i + 19}" for i in range(args.queries)]
    engine.recall(user, "warm up", settings.route_limit)
    before, alone, now, ready = [], [], [], []
    try:
        for q in queries:
            pool = engine.recall(user, q, settings.route_limit)
            t0 = time.perf_counter()
            rerank(pool, settings)
            rerank(deepen(pool, baseline.route_limit), baseline)  # what the UI thread once did: deepening included
            before.append((time.perf_counter() - t0) * 1e3)

            pool = engine.recall(user, q, settings.route_limit)
            t0 = time.perf_counter()
            QuerySession(CurrentSettings(settings, throttle_ms=0)).set_pool(pool)
            alone.append((time.perf_counter() - t0) * 1e3)

            pool = engine.recall(user, q, settings.route_limit)
            session = QuerySession(CurrentSettings(settings, throttle_ms=0))
            session.pin_baseline("top_k 50", baseline)
            t0 = time.perf_counter()
            session.set_pool(pool)
            now.append((time.perf_counter() - t0) * 1e3)
            if session.baseline is None:
                _wait(app, session.pool_deepened)
            ready.append((time.perf_counter() - t0) * 1e3)
            assert session.baseline is not None
            assert session.baseline.results == rerank(deepen(pool, baseline.route_limit), baseline).results
    finally:
        engine.close()
    print(f"{args.chunks:,} chunks, {len(queries)} fresh queries, a baseline pinned at top_k 50 "
          f"(lists {baseline.route_limit} deep; the settings' {settings.route_limit}); load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(_line("before: UI thread, re-rank + baseline deepened there", before))
    print(_line("now: UI thread, set_pool (deepening handed to the worker)", now))
    print(_line("for scale: UI thread, set_pool with no baseline pinned", alone))
    print(_line("now: until the baseline is ranked (worker + queued signal)", ready))
    print(f"UI thread blocked {statistics.median(before) / statistics.median(now):.1f}x less (medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
