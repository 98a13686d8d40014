"""A long day's use of the app in one process (issue 39, class 6): the soak session and its curve.

    python -m tools.soak [--sliders 2000 --evaluations 50 --diagnoses 20 --fixes 10 --switches 5]
                         [--fix-trials 6] [--segments 10] [--cache DIR] [--json FILE]

The real window (offscreen) on the real engine: the demo store and a second, smaller store (two of
the demo's users, with their judged questions attached, as `memsense ingest` attaches them), both
built in a temporary folder. After a warm-up (every kind of step on each store, twice), the session
runs its steps interleaved evenly: drags of a slider on the question on screen, evaluations (the Memsense
preset and the settings on screen), diagnoses, Find a fix searches of a few trials on failing cases
of the last diagnose, and store switches (which open a question on the store opened). It prints the
resident memory after the warm-up and at the end of each tenth of the session, and per kind of step
its median time in each tenth: the curve the soak test (tests/gui/window/test_soak.py) asserts on.
Memory is read with the app idle (`Session.settle`); step times are wall-clock and this process's CPU.
"""
from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a script from any folder: the project first

KINDS = ("drag", "evaluate", "diagnose", "fix", "switch")
"""The kinds of step: a drag is `DRAG` slider changes, each re-ranked at once, then the window repainted."""
DRAG = 5
"""Slider changes in one drag: a user dragging moves a slider through several values between two frames."""
SMALL_USERS = ("demo-ana", "demo-mei")
"""The second store's users: two of the demo's three."""
SLIDER_MOVES = (("mmr_lambda", (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.9, 0.8, 0.7, 0.6)),
                ("top_k", (4, 3, 2, 3)))
"""The knobs a slider step moves, in turn, and the values each goes through (a user dragging to and fro)."""
FIX_CASES = 3
"""Failing cases a Find a fix step searches for."""
STEP_TIMEOUT_S = 300.0
TOLERANCE = 2.0
"""How much slower a kind of step may be at the end than at the start (medians of this process's CPU time
per step, all its threads). CPU time, not wall-clock: on a shared machine the wall-clock time of a step
mostly measures the other processes (at a load average of 12 it was 2-3× the CPU time and swung by 2×
between tenths). The CPU medians of two tenths of one run still differed by up to 1.6× (drags, 40
each) and 1.9× (evaluations, 5 each) under that load, from cache and frequency contention; growth
from a leak (a list re-read whole after every run, work per store kept) compounds over the day, and
past 2× it is beyond that noise."""
GROWTH_MB = 50
"""The most resident memory may grow from the warm-up to the end (issue 39)."""


@dataclass(frozen=True)
class Plan:
    sliders: int = 2000
    evaluations: int = 50
    diagnoses: int = 20
    fixes: int = 10
    switches: int = 5
    fix_trials: int = 6
    segments: int = 10

    def counts(self) -> dict[str, int]:
        drags = -(-self.sliders // DRAG)
        return dict(zip(KINDS, (drags, self.evaluations, self.diagnoses, self.fixes, self.switches)))

    def schedule(self) -> list[str]:
        """Every step of the session, each kind spread evenly over it (the i-th of n at (i + ½) / n)."""
        spots = [((i + 0.5) / n, KINDS.index(kind), kind) for kind, n in self.counts().items() for i in range(n)]
        return [kind for *_, kind in sorted(spots)]


@dataclass
class Curve:
    """What the session measured: resident memory after the warm-up and per segment, and every step's time."""

    plan: Plan
    warm_rss: int = 0
    rss: list[int] = field(default_factory=list)  # bytes, at the end of each segment
    steps: list[tuple[int, str, float, float]] = field(default_factory=list)  # (segment, kind, wall s, CPU s)
    seconds: float = 0.0

    def times(self, kind: str, segment: int | None = None, cpu: bool = False) -> list[float]:
        """Seconds each step of `kind` took (in `segment`): wall-clock, or this process's CPU time (`cpu`)."""
        return [c if cpu else w for seg, k, w, c in self.steps if k == kind and (segment is None or seg == segment)]

    def ends(self, kind: str, cpu: bool = False) -> tuple[list[float], list[float]]:
        """The first and the last tenth of the steps of `kind`, in order: at least 3 each (so one slow
        step is not the median) where the kind has 6 steps or more, else half of them."""
        times = self.times(kind, cpu=cpu)
        n = max(len(times) // 10, min(3, len(times) // 2), 1)
        return times[:n], times[-n:]

    def slower(self, tolerance: float = TOLERANCE) -> list[str]:
        """Each kind of step whose median CPU time at the end is above `tolerance` × its median at the start."""
        late = []
        for kind in KINDS:
            first, last = self.ends(kind, cpu=True)
            if first and statistics.median(last) > tolerance * statistics.median(first):
                late.append(f"{kind}: {_ms(last)} ms of CPU at the end against {_ms(first)} ms at the start")
        return late

    def growth_mb(self) -> float:
        return (self.rss[-1] - self.warm_rss) / 2**20

    def table(self) -> str:
        """The curve as text: one row per segment, its resident memory and each kind's median time
        (wall-clock / CPU, in ms)."""
        head = f"{'segment':>7} {'RSS MB':>8} " + " ".join(f"{k:>15}" for k in KINDS)
        rows = [head + "   (median ms per step: wall / CPU)", f"{'warm-up':>7} {self.warm_rss / 2**20:8.1f}"]
        for seg, rss in enumerate(self.rss):
            cells = []
            for kind in KINDS:
                wall, cpu = self.times(kind, seg), self.times(kind, seg, cpu=True)
                cells.append(f"{_ms(wall):>7} / {_ms(cpu):<5}" if wall else f"{'-':>15}")
            rows.append(f"{seg + 1:>7} {rss / 2**20:8.1f} " + " ".join(cells))
        rows.append("")
        for kind in KINDS:
            (first, last), (cfirst, clast) = self.ends(kind), self.ends(kind, cpu=True)
            if first:
                rows.append(f"{kind:>9}: {len(self.times(kind))} steps; median of the first {len(first)} "
                            f"{_ms(first)} ms (CPU {_ms(cfirst)}), of the last {len(last)} {_ms(last)} ms "
                            f"(CPU {_ms(clast)})")
        rows.append(f"resident memory: {self.warm_rss / 2**20:.1f} MB after the warm-up, {self.rss[-1] / 2**20:.1f} MB "
                    f"at the end ({self.growth_mb():+.1f} MB); {len(self.steps)} steps in {self.seconds:.1f} s")
        return "\n".join(rows)


def _ms(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.0f}"


def rss_bytes() -> int:
    """This process's resident memory after a full collection, the C allocator's free pages given back
    to the system where it can (glibc's `malloc_trim`): freed memory the allocator keeps is not a
    leak, and left in it makes the figure swing by tens of MB from one reading to the next."""
    import psutil

    gc.collect()
    _trim()
    return int(psutil.Process().memory_info().rss)


def _trim() -> None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim(0)


# ---- the stores -------------------------------------------------------------------------------------
def build_stores(folder: Path, cache_dir: Path | None = None) -> tuple[Path, Path]:
    """The demo store and a second store of `SMALL_USERS` with their questions attached, in `folder`."""
    from core.evaluation.store_questions import attach, attach_dataset
    from core.recall.engine import DEMO_DATASET, DEMO_QUESTIONS, build_store

    demo, small = folder / "demo", folder / "small"
    build_store(DEMO_DATASET, demo, cache_dir=cache_dir)
    attach_dataset(demo, DEMO_DATASET)
    lines = [line for line in Path(DEMO_DATASET).read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["user"] in SMALL_USERS]
    dataset = folder / "small-conversations.jsonl"
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_store(dataset, small, cache_dir=cache_dir)
    questions = json.loads(Path(DEMO_QUESTIONS).read_text(encoding="utf-8"))
    questions["questions"] = [q for q in questions["questions"] if q["user"] in SMALL_USERS]
    question_file = folder / "small-questions.json"
    question_file.write_text(json.dumps(questions), encoding="utf-8")
    attach(small, question_file)
    return demo, small


def make_window(home: Path, cache_dir: Path | None = None):
    """The app's window as `memsense_gui.app.create_window` builds it (Evaluation, Runs, Diagnose and Find
    a fix installed), its engines reading embeddings through `cache_dir`; Find a fix searches in this process."""
    from core.recall.engine import Engine
    from memsense_gui.state import paths
    from memsense_gui.window.evaluation import install_evaluation
    from memsense_gui.window.failures_actions import install_failures
    from memsense_gui.window.main_window import MainWindow
    from memsense_gui.window.run_actions import install_runs

    window = MainWindow(home, paths.settings(home), engine_factory=lambda loc: Engine(loc, cache_dir=cache_dir))
    window.evaluation = install_evaluation(window)
    window.runs = install_runs(window, window.evaluation)
    window.failures = install_failures(window)
    window.failures.jobs = 1  # the machine's cores are shared: the search runs in this process
    window.restore_layout()  # as the app: every view added first, then the task layout (Inspect at first)
    window.show()
    return window


# ---- the session ------------------------------------------------------------------------------------
def until(condition: Callable[[], Any], timeout_s: float = STEP_TIMEOUT_S) -> None:
    """Let the app run until `condition()` holds (a TimeoutError past `timeout_s`)."""
    from PySide6.QtCore import QCoreApplication

    end = time.monotonic() + timeout_s
    while not condition():
        QCoreApplication.processEvents()
        if condition():
            return
        if time.monotonic() > end:
            raise TimeoutError(f"soak: the app did not finish a step in {timeout_s:.0f} s")
        time.sleep(0.002)


class Session:
    """Drives one window through the steps of a `Plan` between stores (see the module docstring)."""

    def __init__(self, window, stores: tuple[Path, Path], plan: Plan):
        from core.config.presets import BUILTIN, MEMSENSE
        from memsense_gui.views.evaluation import with_current

        self.window, self.stores, self.plan = window, stores, plan
        self.store = 0  # index of the store open
        self.moves = 0
        self.cases: dict[str, list[str]] = {}  # store -> failing cases of its last diagnose
        ctx = window.ctx
        window.evaluation.presets_fn = lambda: with_current({MEMSENSE: BUILTIN[MEMSENSE]}, ctx.current.config)
        window.failures.fix_view.trials.setValue(plan.fix_trials)

    def _task(self, task) -> None:
        """Wait for `task` (a `Task`) to end; its failure is raised."""
        if task is None:
            raise RuntimeError("soak: the app started no task (no store open?)")
        errors: list[BaseException] = []
        task.failed.connect(errors.append)
        until(lambda: task.done)
        if errors:
            raise RuntimeError(f"soak: {task.name} failed: {errors[0]}") from errors[0]

    # ---- the steps
    def open(self, index: int) -> None:
        """Open store `index`, wait for its model, and open its first judged question."""
        ctx, location = self.window.ctx, str(self.stores[index])
        self.window.stores.open_store(location)
        until(lambda: ctx.location == location and ctx.model_ready)
        self.store = index
        question = self.window.evaluation.source.question_set()[1].questions[0]
        gold = [str(s) for s in question.gold_sessions]
        self.window.queries.open_question(question.user_id, question.text, gold)
        until(lambda: ctx.session.ranking is not None and ctx.session.pool is not None
              and ctx.session.pool.query == question.text)
        ctx.current.flush()

    def drag(self) -> None:
        """`DRAG` slider changes (one knob, then the other, in turn), each re-ranked and shown at once
        (`flush`), then the app's events run (the window repaints)."""
        from PySide6.QtCore import QCoreApplication

        knob, values = SLIDER_MOVES[self.moves % len(SLIDER_MOVES)]
        for i in range(DRAG):
            value = values[(self.moves // len(SLIDER_MOVES) * DRAG + i) % len(values)]
            self.window.tuning.set_knob(knob, value)
            self.window.ctx.current.flush()
        self.moves += 1
        QCoreApplication.processEvents()

    def evaluate(self) -> None:
        self._task(self.window.evaluation.start())

    def diagnose(self) -> None:
        from core.evaluation.diagnose import RETURNED

        actions = self.window.failures
        self._task(actions.diagnose())
        run = actions.diagnose_view.run
        lost = list(dict.fromkeys(i.question_id for i in run.diagnosis.items if i.stage not in RETURNED))
        if lost:  # at settings that return every gold session, the cases found before stay the ones to fix
            self.cases[str(self.stores[self.store])] = lost[:FIX_CASES]

    def fix(self) -> None:
        cases = self.cases.get(str(self.stores[self.store]))
        if not cases:
            raise RuntimeError("soak: no failing case of this store to fix (its diagnose found none)")
        self._task(self.window.failures.find_fix(cases, "Diagnose"))

    def switch(self) -> None:
        self.open(1 - self.store)

    def settle(self) -> None:
        """Wait until the app is idle: no task on any of its runners (a re-diagnose the settings started, a
        run being kept, the list of runs read), none about to start. Memory read mid-task swings by 100 MB."""
        from memsense_gui.workers.runner import TaskRunner

        runners = self.window.findChildren(TaskRunner)
        timer = self.window.failures.timer
        until(lambda: not timer.isActive() and not any(r.busy for r in runners))

    def resident(self) -> int:
        """Resident memory with the app idle (`settle`). Read mid-task, or while the pools of the store
        closed were still held (until the next recall, before that was fixed), it swung by 100 MB."""
        self.settle()
        return rss_bytes()

    def warm_up(self) -> None:
        """Twice: every kind of step once on each store; then back on the first. Memory takes its level
        only once a store is opened again after work on the other (19 MB more then, and flat after it)."""
        for index in (0, 1, 0, 1):
            self.open(index)
            for _ in range(len(SLIDER_MOVES) * 2):
                self.drag()
            self.evaluate()
            self.diagnose()
            self.fix()
        self.open(0)

    def run(self, log: Callable[[str], None] = lambda _line: None) -> Curve:
        """The warm-up, then the plan's steps; the curve measured."""
        plan, curve = self.plan, Curve(self.plan)
        started = time.perf_counter()
        self.warm_up()
        curve.warm_rss = self.resident()
        log(f"warm-up done in {time.perf_counter() - started:.1f} s: {curve.warm_rss / 2**20:.1f} MB resident")
        schedule = plan.schedule()
        ends = {round(len(schedule) * (s + 1) / plan.segments) - 1: s for s in range(plan.segments)}
        started = time.perf_counter()
        for i, kind in enumerate(schedule):
            segment = min(i * plan.segments // len(schedule), plan.segments - 1)
            t, c = time.perf_counter(), time.process_time()
            getattr(self, kind)()
            curve.steps.append((segment, kind, time.perf_counter() - t, time.process_time() - c))
            if i in ends:
                curve.rss.append(self.resident())
                log(f"segment {ends[i] + 1}/{plan.segments}: {curve.rss[-1] / 2**20:.1f} MB resident, "
                    f"{time.perf_counter() - started:.1f} s")
        curve.seconds = time.perf_counter() - started
        return curve


def _record(curve: Curve, kept: list[int], stores: tuple[Path, Path]) -> dict[str, Any]:
    """What the soak test asserts on: the steps done per kind against the plan, the runs announced as
    kept and those the stores' histories hold, the memory growth and the kinds that got slower."""
    from core.evaluation.history import History, history_path

    held = 0
    for store in stores:
        with History(history_path(store), create=False) as history:
            held += len(history.runs())
    return {"planned": curve.plan.counts(), "done": {k: len(curve.times(k)) for k in KINDS},
            "segments": len(curve.rss), "kept": len(kept), "held": held, "growth_mb": curve.growth_mb(),
            "slower": curve.slower(), "table": curve.table()}


def main(argv: list[str] | None = None) -> int:
    import os

    defaults = Plan()
    parser = argparse.ArgumentParser(description="A long day's use of the app in one process: memory and step times.")
    for name in ("sliders", "evaluations", "diagnoses", "fixes", "switches", "fix_trials", "segments"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=getattr(defaults, name))
    parser.add_argument("--cache", type=Path, help="the embedding cache (default: the machine's)")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write what was measured and counted to FILE (the soak test reads it)")
    args = parser.parse_args(argv)
    plan = Plan(args.sliders, args.evaluations, args.diagnoses, args.fixes, args.switches, args.fix_trials,
                args.segments)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    folder = Path(tempfile.mkdtemp(prefix="memsense-soak-"))  # the stores, their histories, the app home
    os.environ["MEMSENSE_GUI_HOME"] = str(folder / "home")
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    window = None
    try:
        stores = build_stores(folder, args.cache)
        window = make_window(folder / "home", args.cache)
        kept: list[int] = []
        window.ctx.runs.recorded.connect(kept.append)
        session = Session(window, stores, plan)
        curve = session.run(lambda line: print(line, flush=True))
        session.settle()  # every run kept is in its history
        if args.json is not None:
            args.json.write_text(json.dumps(_record(curve, kept, stores)), encoding="utf-8")
    finally:
        if window is not None:
            window.close()  # the stores close: the folder can go
            app.processEvents()
        shutil.rmtree(folder, ignore_errors=True)
    print(curve.table())
    verdict = [f"memory grew by {curve.growth_mb():.1f} MB (at most {GROWTH_MB})"] if curve.growth_mb() >= GROWTH_MB else []
    verdict += [f"slower at the end: {line}" for line in curve.slower()]
    print("\n".join(verdict) or f"no step kind is over {TOLERANCE}× slower at the end; memory grew less than {GROWTH_MB} MB")
    if hasattr(os, "getloadavg"):
        print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 1 if verdict else 0


if __name__ == "__main__":
    sys.exit(main())
