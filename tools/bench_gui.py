"""GUI latency benchmark: slider change -> table and plots updated, and app start -> usable window.

    python tools/bench_gui.py                      # a synthetic LoCoMo-sized pool, no model
    python tools/bench_gui.py --synthetic 30000    # a synthetic store, one user of 30,000 chunks, no model
    python tools/bench_gui.py --store DIR --user demo-ana --query "How many races has Ana run in 2024?"

Slider: 200 changes cycling over lambda, duplicate threshold, RRF k, alpha, turn support,
route weights and top_k; each is timed from the slider's new value to the re-ranked results
table, pool, route matrix, MMR trace and both plots updated and painted (the throttle is
flushed so the figure is the work, not the wait). Prints median and p95. With --synthetic N
the app runs the real engine (recall pools as deep as the settings need, deepened from the
cached scores when a knob asks for more) over a synthetic store of N chunks with random
vectors (no model); a change that deepens the pool is timed until its deeper ranking is on
screen, and a second pass moves top_k and the pool limits to their maximum (route lists
`MAX_ROUTE_DEPTH` deep) and back, once per each of `--deep-queries` fresh queries, reported apart,
with the changes that deepened the pool also on their own. Each figure comes with the GUI thread's own CPU time
per change (`time.thread_time`: what waiting for a core on a busy machine does not inflate) and
the load average.
Start: with --store, a fresh process opens the store through the real entry point, with the
query as the last one typed, and reports when the window is shown and usable (store open,
users listed), when the model is ready in the background, when the query's answer is on
screen (the app re-runs the last query on start), when every chunk of the user is listed for
Why not? (after the answer), and whether torch was imported. BENCH_TRACE=FILE runs FILE's
Python in the child first (to wrap functions with timers) and prints its "T name start end" lines.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project first, from any folder

SLIDER_STEPS: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("mmr_lambda", (0.5, 0.6, 0.7, 0.78, 0.9, 1.0)),
    ("duplicate_threshold", (0.8, 0.85, 0.9, 0.94, 0.97)),
    ("rrf_k", (5.0, 15.0, 30.0, 60.0)),
    ("alpha", (0.0, 0.1, 0.3)),
    ("turn_support_cap", (0.0, 0.06, 0.12, 0.2)),
    ("turn_support_factor", (0.3, 0.6, 1.2)),
    ("route_weights.lexical", (0.0, 1.0, 2.5)),
    ("route_weights.vec_full", (0.5, 1.0, 2.0)),
    ("top_k", (4, 8, 10, 4)),
)


class SyntheticEngine:
    """The engine interface over one seeded synthetic pool about the size of a LoCoMo conversation."""

    pools_deepen = False  # a synthetic pool is as deep as any config asks
    model_text: str | None = None
    model_path: str | None = None

    def __init__(self, location: str):
        from core.rank.synthetic import synthetic_pool

        self.location = location

        self._pool = lambda user, query: synthetic_pool(
            n_sessions=24, turns_per_session=24, dim=384, seed=7, user_id=user, query=query)

    def load_model(self) -> None:
        pass

    def users(self) -> list[str]:
        return ["synthetic"]

    def chunks(self, user_id: str):
        return list(self._pool(user_id, "").chunks)

    def recall(self, user_id: str, query: str, depth: int | None = 0):
        return self._pool(user_id, query)

    def recall_for(self, user_id: str, query: str, cfg):
        return self._pool(user_id, query)

    def note(self, user_id: str) -> str:
        return ""

    def close(self) -> None:
        pass


DEEPEST_STEPS: tuple[tuple[str, float], ...] = (
    ("top_k", 50), ("candidate_min", 2000), ("route_min", 4000), ("route_multiplier", 4), ("candidate_multiplier", 8),
    ("mmr_lambda", 0.6), ("route_multiplier", 2), ("candidate_min", 32), ("route_min", 40), ("top_k", 4),
)
"""top_k and the pool limits (set by a config file or auto-tune: they have no slider) up to the
deepest lists any config allows, and back."""


def synthetic_store(chunks: int) -> tuple[str, str]:
    """A temporary store with one user of `chunks` synthetic chunks; (folder, user)."""
    import numpy as np

    from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
    from core.recall.backends import open_store

    folder = Path(tempfile.mkdtemp(prefix="memsense-bench-store-")) / "store"
    user_chunks, vectors = synthetic_user("big", chunks, np.random.default_rng(chunks))
    store = open_store(folder, create=True)
    store.write_user("big", user_chunks, vectors, RandomEmbedder.key, DIM)
    store.close()
    return str(folder), "big"


def synthetic_engine(location: str):
    """The real engine over a synthetic store, a seeded random vector standing in for the model."""
    from core.cli.bench_scale import RandomEmbedder
    from core.recall.engine import Engine

    return Engine(location, embedder=RandomEmbedder())


def _wait(app, signal, timeout_s: float = 120.0) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()


def slider_changes(args: argparse.Namespace) -> tuple[list[float], list[float]]:
    """Milliseconds per slider change, `args.changes` of them; then, with --synthetic, per change
    of the pool-limit pass (`DEEPEST_STEPS`)."""
    from PySide6.QtWidgets import QApplication

    from memsense_gui import theme
    from memsense_gui.state import paths
    from memsense_gui.state.context import default_engine_factory
    from memsense_gui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    home = Path(tempfile.mkdtemp(prefix="memsense-bench-"))
    store, user = args.store, args.user
    if args.synthetic:
        store, user = synthetic_store(args.synthetic)
        factory = synthetic_engine
    else:
        factory = default_engine_factory if args.store else SyntheticEngine
    window = MainWindow(home, paths.settings(home), engine_factory=factory)
    theme.apply(app, False)
    window.resize(1600, 1000)
    window.show()
    window.default_layout()
    window.stores.open_store(store or "synthetic")
    _wait(app, window.ctx.model_loaded)
    if window.ctx.engine is None:
        raise SystemExit("bench: the store did not open")
    if user:
        window.user_combo.setCurrentText(user)
    window.query_edit.setText(args.query)
    window.queries.run_query()
    _wait(app, window.ctx.ranking_updated)
    session = window.ctx.session
    ranking = session.ranking
    where = f"{args.synthetic} synthetic chunks" if args.synthetic else ("store " + args.store if args.store else "synthetic")
    print(f"pool: {ranking.pool.size} chunks recalled (lists {ranking.pool.depth} deep), {len(ranking.candidates)} "
          f"candidates, {len(ranking.rows)} re-ranked rows ({where})")
    window.results.view.selectRow(0)
    app.processEvents()

    cpu: list[float] = []  # the GUI thread's own CPU time per change: what a busy machine cannot inflate

    def change(knob: str, value: float) -> float:
        t0, c0 = time.perf_counter(), time.thread_time()
        if knob in window.tuning.sliders:
            window.tuning.set_knob(knob, value)
        else:  # pool limits have no slider: a config file or an auto-tune result sets them
            window.ctx.current.edit(replace(window.ctx.current.config, **{knob: value}), knob)
        window.ctx.current.flush()
        app.processEvents()
        if session.is_updating:  # a deeper pool, or a long re-rank, is ranked off the UI thread: time it to the screen
            _wait(app, session.ranking_changed)
            app.processEvents()
        cpu.append((time.thread_time() - c0) * 1000)
        return (time.perf_counter() - t0) * 1000

    steps = [(k, v) for k, values in SLIDER_STEPS for v in values]
    times = [change(*steps[i % len(steps)]) for i in range(args.changes)]
    slider_cpu = cpu[:]
    deepest, depths, deepening = [], [], []  # deepening: (wall, CPU) of each change that deepened the pool
    for n in range(args.deep_queries if args.synthetic or args.store else 0):
        if n:  # a fresh query each pass: its pool is recalled for the settings, and deepens again
            window.ctx.current.edit(replace(window.ctx.current.config, **dict(DEEPEST_STEPS[-1:])), "top_k")
            window.query_edit.setText(f"{args.query} ({n})")
            window.queries.run_query()
            _wait(app, window.ctx.ranking_updated)
        for knob, value in DEEPEST_STEPS:
            depth = session.ranking.pool.depth
            deepest.append(change(knob, value))
            if session.ranking.pool.depth > depth:
                deepening.append((deepest[-1], cpu[-1]))
            if not n:
                depths.append(session.ranking.pool.depth)
    if deepest:
        print(f"pool limits pass: lists up to {max(depths)} deep per route ({' → '.join(map(str, depths))}), "
              f"{args.deep_queries} queries")
    window.close()
    shutil.rmtree(home, ignore_errors=True)
    if args.synthetic:  # hundreds of MB a run: never left behind
        shutil.rmtree(Path(store).parent, ignore_errors=True)
    report(slider_cpu, "slider change, the GUI thread's CPU time")
    if deepest:
        report(cpu[len(slider_cpu):], "pool limits pass, the GUI thread's CPU time")
    if deepening:
        report([wall for wall, _ in deepening], "a change that deepens the pool, to the deeper ranking on screen")
        report([gui for _, gui in deepening], "a change that deepens the pool, the GUI thread's CPU time")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return times, deepest


def report(times: list[float], what: str = "slider change") -> None:
    ordered = sorted(times)
    p95 = ordered[max(0, int(round(0.95 * len(ordered))) - 1)]
    print(f"{what} -> table and plots updated: median {statistics.median(times):.1f} ms, "
          f"p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms over {len(times)} changes")


def startup(store: str, user: str | None, query: str) -> None:
    """App start (a new process, timed from before it is spawned) -> usable window -> first answer."""
    home = tempfile.mkdtemp(prefix="memsense-bench-start-")
    env = {**os.environ, "MEMSENSE_GUI_HOME": home}
    query = f"{query} ({os.path.basename(home)})"  # never typed before: the embedding cache cannot answer it
    t0 = time.time()
    out = subprocess.run([sys.executable, __file__, "--startup-child", "--store", store, "--query", query,
                          *(["--user", user] if user else [])],
                         env=env, capture_output=True, text=True, timeout=300)
    marks = {k: float(v) - t0 for k, v in (line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)}
    if os.environ.get("BENCH_TRACE"):
        print("\n".join(f"{line.split(' ')[1]} {float(line.split(' ')[2]) - t0:.3f} -> {float(line.split(' ')[4]) - t0:.3f}"
                        for line in out.stdout.splitlines() if line.startswith("T ")))
    if "answer" not in marks:
        print(out.stdout, out.stderr, file=sys.stderr)
        raise SystemExit("bench: the child did not answer the query")
    print(f"app start -> window shown {marks['shown']:.2f} s; -> first usable window (store open, users "
          f"listed) {marks['usable']:.2f} s; model ready in the background at {marks['model']:.2f} s; "
          f"query recalled at {marks['recalled']:.2f} s; first answer to the query on screen at {marks['answer']:.2f} s; "
          f"every chunk of the user listed (Why not?) at {marks.get('chunks', float('nan')):.2f} s "
          f"(Python started in {marks['imported']:.2f} s; torch imported: {out.stdout.count('torch=1') > 0}; "
          f"embedding backend {os.environ.get('MEMSENSE_EMBED_BACKEND') or 'onnx'})")


def startup_child(store: str, user: str | None, query: str) -> None:
    """Prints epoch times of each milestone, for the parent to subtract its own start from. The
    query is the last one typed (as the app restores it), run as soon as the store opens."""
    print(f"imported={time.time()}", flush=True)
    if os.environ.get("BENCH_TRACE"):
        exec(open(os.environ["BENCH_TRACE"]).read(), {})
    from memsense_gui import app as app_module
    from memsense_gui.state import paths

    home = paths.app_home()
    settings = paths.settings(home)
    settings.setValue("store/last", store)
    settings.setValue("query/text", query)
    if user:
        settings.setValue("query/user", user)
    app, window = app_module.create_window(sys.argv[:1])
    window.ctx.store_opened.connect(lambda _loc: print(f"usable={time.time()}", flush=True))
    window.ctx.model_loaded.connect(lambda: print(f"model={time.time()}", flush=True))
    listed: list[float] = []
    window.ctx.chunks_loaded.connect(lambda _user: (listed.append(time.time()), print(f"chunks={listed[-1]}", flush=True)))
    window.ctx.recall_finished.connect(lambda _pool: print(f"recalled={time.time()}", flush=True))
    window.ctx.ranking_updated.connect(lambda _r: print(f"answer={time.time()}", flush=True))
    app.processEvents()
    print(f"shown={time.time()}", flush=True)
    for signal, ready in ((window.ctx.store_opened, lambda: window.ctx.engine is not None),
                          (window.ctx.model_loaded, lambda: window.ctx.model_ready),
                          (window.ctx.ranking_updated, lambda: window.ctx.session.ranking is not None),
                          (window.ctx.chunks_loaded, lambda: bool(listed))):
        if not ready():
            _wait(app, signal)
    print(f"torch={int('torch' in sys.modules)}", flush=True)
    window.close()
    os._exit(0)  # the timing is done; skip tearing down torch and Qt


def make_store(location: str, chunks: int, dataset: Path) -> None:
    """A store with one user of about `chunks` chunks: the LoCoMo sessions of `dataset`, cycled and
    renumbered into one conversation, ingested through the real path with the real model (the
    texts repeat, so the embedding cache makes every cycle after the first cheap)."""
    import json
    from collections import Counter

    from core.ingest import build_chunks, load_conversations
    from core.recall.engine import build_store

    samples = json.loads(dataset.read_text(encoding="utf-8"))
    per_session = Counter((c.user_id, c.session_number) for c in build_chunks(load_conversations(dataset)))
    sessions = [(s["sample_id"], s["conversation"], int(k.split("_")[1])) for s in samples
                for k in s["conversation"] if k.startswith("session_") and not k.endswith("date_time")]
    big, total, n = {"speaker_a": samples[0]["conversation"]["speaker_a"],
                     "speaker_b": samples[0]["conversation"]["speaker_b"]}, 0, 0
    while total < chunks:
        user, conv, number = sessions[n % len(sessions)]
        n += 1
        big[f"session_{n}"], big[f"session_{n}_date_time"] = conv[f"session_{number}"], conv[f"session_{number}_date_time"]
        total += per_session[user, number]
    path = Path(tempfile.mkdtemp(prefix="memsense-big-")) / "big.json"
    path.write_text(json.dumps([{"sample_id": "big", "conversation": big}]), encoding="utf-8")
    stats = build_store(path, location)
    print(f"built {location}: {stats.session_chunks + stats.turn_chunks} chunks in {stats.seconds:.0f} s "
          f"({stats.texts_embedded} texts embedded, {stats.texts_from_cache} from the cache)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", help="a store folder (default: a synthetic pool, no model)")
    parser.add_argument("--synthetic", type=int, metavar="N",
                        help="slider timing on a synthetic store of one user with N chunks (random vectors, no model)")
    parser.add_argument("--user", help="user (conversation) to query")
    parser.add_argument("--query", default="How many races has Ana run in 2024?")
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--deep-queries", type=int, default=6,
                        help="queries whose pool the pool-limit pass deepens (each deepens a fresh pool)")
    parser.add_argument("--make-store", metavar="DIR", help="build a one-user store of --chunks LoCoMo chunks, then exit")
    parser.add_argument("--chunks", type=int, default=30000)
    parser.add_argument("--dataset", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets"
                        / "locomo" / "locomo-dev.json", help="LoCoMo file for --make-store")
    parser.add_argument("--startup-only", action="store_true", help="with --store: only time app start -> first answer")
    parser.add_argument("--startup-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.make_store:
        make_store(args.make_store, args.chunks, args.dataset)
        return 0
    if args.startup_child:
        startup_child(args.store, args.user, args.query)
        return 0
    if not args.startup_only:
        times, deepest = slider_changes(args)
        report(times)
        if deepest:
            report(deepest, "top_k and pool limits up to the deepest lists and back")
    if args.store:
        startup(args.store, args.user, args.query)
    return 0


if __name__ == "__main__":
    sys.exit(main())
