"""Is the window ever frozen during a long job? A 20 ms heartbeat on the GUI thread, per job.

    python tools/bench_stalls.py --store /work/scratch/locomo \\
        --questions ../shared/datasets/locomo/locomo-dev.json [--jobs evaluate,tune,diagnose,fix,impact,report] \\
        [--trials 20] [--trace]

Runs the real app (offscreen unless QT_QPA_PLATFORM says otherwise) in a temporary home, on a
copy of the store (the runs a job keeps go to the copy's history, never beside the store), with
the question file as the store's question set, and starts each long job as the user would:
Evaluate (every preset), Auto-tune (a train/test split of --trials trials), Diagnose, Find a fix
(--trials trials on five lost cases), Impact (the question set's questions as the queries, Memsense's
defaults against --b) and File > Export report (Memsense's defaults against --b). A `QTimer`
ticking every 20 ms on the GUI thread notes when each tick ran; a stall is the gap between two
ticks, and the GUI thread's own CPU time in that gap (`time.thread_time`) says how much of it was
the app's work on that thread (the rest it waited: for the GIL, or for a core on a busy machine).
The job's view is raised before the heartbeat starts (a task layout switch is the user's step).
Per job it prints the job's time (start to its result on screen; for Evaluate and Auto-tune, to
their run listed in History), the longest stall and how many passed 100 ms, and the same two of
the GUI thread's CPU time, from the job's start to a short settle after its end (what the result's
arrival costs the GUI thread counts), with the machine's load average.
With --trace a timer signal samples the GUI thread's Python stack every 5 ms, and each stall over 100 ms
prints the project functions seen most in its samples (where the time went).
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project first, from any folder

from tools.screenshot import _settle, start_app, until  # noqa: E402

BEAT_MS = 20
STALL_MS = 100.0
"""A gap between heartbeats longer than this is a stall a user feels."""
SETTLE_MS = 1500
"""How long the heartbeat keeps watching after a job's result is on screen."""
WAIT_S = 3600.0
CASES = 5
JOBS = ("evaluate", "tune", "diagnose", "fix", "impact", "report")


@dataclass
class Stall:
    start: float
    ms: float
    cpu_ms: float  # the GUI thread's own CPU time in the gap: the rest it waited (the GIL, the OS)
    gc_ms: float = 0.0  # of the gap, the garbage collector's (on any thread: it holds the GIL)
    where: list[tuple[str, int]] = field(default_factory=list)


class Sampler:
    """Samples the GUI thread's Python stack every few ms (a py-spy of the project's own frames): a
    real-time interval timer's signal, whose handler Python runs on the main thread at its next
    bytecode (a stack in Qt's C++ alone shows as the event loop's frame)."""

    def __init__(self, every_s: float = 0.005):
        self.every_s = every_s
        self.samples: list[tuple[float, tuple[str, ...]]] = []

    def start(self) -> None:
        signal.signal(signal.SIGALRM, self._sample)
        signal.setitimer(signal.ITIMER_REAL, self.every_s, self.every_s)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)

    def _sample(self, _signum: int, frame: Any) -> None:
        root = str(ROOT)
        stack: list[str] = []
        inner = frame
        while frame is not None:
            code = frame.f_code
            if code.co_filename.startswith(root) and "bench_stalls" not in code.co_filename:
                stack.append(f"{Path(code.co_filename).relative_to(root)}:{frame.f_lineno} {code.co_name}")
            frame = frame.f_back
        if inner is not None and "bench_stalls" in inner.f_code.co_filename:
            stack.append("(in Qt: no Python frame on the GUI thread)")
        elif inner is not None and not inner.f_code.co_filename.startswith(root):
            stack.append(f"(innermost) {Path(inner.f_code.co_filename).name}:{inner.f_lineno} {inner.f_code.co_name}")
        self.samples.append((time.perf_counter(), tuple(stack)))

    def between(self, start: float, end: float, top: int = 8) -> list[tuple[str, int]]:
        """The frames most seen between `start` and `end` (each frame counted once a sample), after
        the number of samples taken (few samples in a long stall: other threads held the GIL)."""
        seen: Counter[str] = Counter()
        taken = 0
        for t, stack in self.samples:
            if start <= t <= end:
                taken += 1
                seen.update(set(stack))
        return [("samples taken", taken), *seen.most_common(top)]


class Collections:
    """Every run of Python's cyclic garbage collector, on any thread: (start, end, generation).
    A collection holds the GIL from start to end, so the GUI thread cannot run meanwhile."""

    def __init__(self) -> None:
        self.runs: list[tuple[float, float, int]] = []
        self._started = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        now = time.perf_counter()
        if phase == "start":
            self._started = now
        else:
            self.runs.append((self._started, now, info["generation"]))

    def within(self, start: float, end: float) -> list[tuple[float, float, int]]:
        return [(max(a, start), min(b, end), g) for a, b, g in self.runs if a < end and b > start]

    def summary(self, start: float, end: float) -> str:
        runs = self.within(start, end)
        full = [(b - a) * 1e3 for a, b, g in runs if g == 2]
        total = sum(b - a for a, b, _ in runs) * 1e3
        return (f"garbage collections {len(runs)} ({total:.0f} ms), full ones {len(full)}"
                + (f", longest {max(full):.0f} ms" if full else ""))


class Heartbeat:
    """A 20 ms timer on the GUI thread; the gaps between its ticks are the stalls."""

    def __init__(self, sampler: Sampler | None = None, collections: Collections | None = None):
        from PySide6.QtCore import Qt, QTimer

        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(BEAT_MS)
        self.timer.timeout.connect(self._tick)
        self.sampler = sampler
        self.collections = collections or Collections()
        self.stalls: list[Stall] = []
        self.last = self.last_cpu = 0.0
        self.longest = self.longest_cpu = 0.0

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        gap, busy = (now - self.last) * 1e3, (cpu - self.last_cpu) * 1e3
        if gap > STALL_MS:
            where = self.sampler.between(self.last, now) if self.sampler is not None else []
            collected = sum(b - a for a, b, _ in self.collections.within(self.last, now)) * 1e3
            self.stalls.append(Stall(self.last, gap, busy, collected, where))
        self.longest = max(self.longest, gap)
        self.longest_cpu = max(self.longest_cpu, busy)
        self.last, self.last_cpu = now, cpu

    def start(self) -> None:
        self.stalls, self.longest, self.longest_cpu = [], 0.0, 0.0
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.timer.start()

    def stop(self) -> None:
        self._tick()
        self.timer.stop()


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def open_app(store: Path, questions: Path):
    """The app's window as `memsense_gui.app.create_window` builds it, in a temporary home, with a
    copy of `store` open, its model loaded and `questions` its question set."""
    copy = Path(tempfile.mkdtemp(prefix="memsense-stalls-")) / store.name
    shutil.copytree(store, copy)
    app, window, evaluation, runs, failures = start_app((1280, 720), failures=True)
    window.stores.open_store(str(copy))
    until(app, lambda: window.ctx.model_ready and window.ctx.engine is not None, 600, "the store and its model",
          step_ms=10)
    evaluation.source.set_path(questions)
    _settle(app, 300)
    return app, window, evaluation, runs, failures, copy


def run_jobs(args: argparse.Namespace) -> list[str]:
    from PySide6.QtCore import QItemSelectionModel

    from core.config.presets import BUILTIN
    from memsense_gui.views.dock import DockId

    app, window, evaluation, runs, failures, copy = open_app(args.store.resolve(), args.questions.resolve())
    sampler = None
    if args.trace:
        sampler = Sampler()
        sampler.start()
    beat = Heartbeat(sampler)
    lines: list[str] = []
    reports: list[Path] = []

    def listed_after(count: Callable[[], int]) -> Callable[[], bool]:
        before = count()
        return lambda: count() > before

    def evaluate() -> Callable[[], bool]:
        done = listed_after(lambda: len(runs.history.runs_model.runs))
        evaluation.start()
        return done

    def tune() -> Callable[[], bool]:
        panel = evaluation.autotune
        finished: list[Any] = []
        panel.tuning_finished.connect(finished.append)
        done = listed_after(lambda: len(runs.history.runs_model.runs))
        evaluation.tabs.setCurrentWidget(panel)
        panel.folds_spin.setValue(panel.folds_spin.minimum())  # a train/test split
        panel.trials_spin.setValue(args.trials)
        panel.start()
        return lambda: bool(finished) and done()

    def diagnose() -> Callable[[], bool]:
        view = failures.diagnose_view
        before = view.run
        failures.diagnose()
        return lambda: view.run is not None and view.run is not before

    def fix() -> Callable[[], bool]:
        view, fix_view = failures.diagnose_view, failures.fix_view
        chosen: list[str] = []
        selection = view.table.selectionModel()
        selection.clearSelection()
        for r in range(view.proxy.rowCount()):
            index = view.proxy.index(r, 0)
            qid = view.model.item(view.proxy.mapToSource(index).row()).question_id
            if qid not in chosen and len(chosen) < CASES:
                chosen.append(qid)
                selection.select(index, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
        fix_view.trials.setValue(args.trials)
        before = fix_view.run
        view.request_fix()
        return lambda: fix_view.run is not None and fix_view.run is not before

    def impact() -> Callable[[], bool]:
        view = runs.impact
        view.use_question_set()
        view.a_choice.choose("preset", "memsense")
        view.b_choice.choose("preset", args.b)
        finished: list[Any] = []
        view.impact_finished.connect(finished.append)
        view.start()
        return lambda: bool(finished)

    def report() -> Callable[[], bool]:
        path = Path(tempfile.mkdtemp(prefix="memsense-stalls-report-")) / "report.html"
        reports.append(path.parent)
        cfg = BUILTIN["memsense"]
        runs.actions.export_report(str(path), ("memsense", cfg), (args.b, BUILTIN[args.b]), cfg.top_k)
        return lambda: path.exists() and not runs.actions.report_slot.running

    starters = {"evaluate": evaluate, "tune": tune, "diagnose": diagnose, "fix": fix, "impact": impact,
                "report": report}
    docks = {"evaluate": DockId.EVALUATION, "tune": DockId.EVALUATION, "diagnose": DockId.DIAGNOSE,
             "fix": DockId.FIX, "impact": DockId.IMPACT}
    for name in args.jobs:
        if name in docks:  # the user opens the job's view first (switching to its task layout): not the job's cost
            window.raise_dock(docks[name])
        _settle(app, 500)
        beat.start()
        started = time.perf_counter()
        done = starters[name]()
        until(app, done, WAIT_S, name, step_ms=10)
        seconds = time.perf_counter() - started
        _settle(app, SETTLE_MS)
        beat.stop()
        over = [s for s in beat.stalls if s.ms > STALL_MS]
        busy = [s for s in beat.stalls if s.cpu_ms > STALL_MS]
        line = (f"{name:<9} {seconds:7.1f} s   longest stall {beat.longest:5.0f} ms, over {STALL_MS:.0f} ms: "
                f"{len(over):3d}   GUI thread busy: longest {beat.longest_cpu:5.0f} ms, over {STALL_MS:.0f} ms: "
                f"{len(busy):3d}   ({_load()})")
        print(line, flush=True)
        lines.append(line)
        gc_in_stalls = sum(s.gc_ms for s in over)
        print(f"    {beat.collections.summary(started, time.perf_counter())}; in the stalls over {STALL_MS:.0f} ms: "
              f"{gc_in_stalls:.0f} ms of {sum(s.ms for s in over):.0f} ms", flush=True)
        for stall in sorted(over, key=lambda s: -s.cpu_ms)[:args.show]:
            print(f"    stall {stall.ms:6.0f} ms (GUI thread busy {stall.cpu_ms:4.0f} ms, garbage collection "
                  f"{stall.gc_ms:4.0f} ms) at +{stall.start - started:6.2f} s", flush=True)
            for frame, n in stall.where:
                print(f"        {n:4d} samples  {frame}", flush=True)
    if sampler is not None:
        sampler.stop()
    window.close()
    for folder in (copy.parent, Path(os.environ["MEMSENSE_GUI_HOME"]), *reports):
        shutil.rmtree(folder, ignore_errors=True)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="a store folder (copied first; never written)")
    parser.add_argument("--questions", type=Path, required=True, help="its question file (LoCoMo JSON or the project's)")
    parser.add_argument("--jobs", default=",".join(JOBS), help=f"comma-separated, in order, of {', '.join(JOBS)}")
    parser.add_argument("--trials", type=int, default=20, help="trials of Auto-tune and of Find a fix")
    parser.add_argument("--b", default="top_rank_bonus", help="the preset B of Impact and the report")
    parser.add_argument("--trace", action="store_true", help="sample the GUI thread: where each stall's time went")
    parser.add_argument("--show", type=int, default=3, help="with --trace, the longest stalls shown per job")
    parser.add_argument("--switch-interval", type=float, metavar="MS",
                        help="the interpreter's thread switch interval (sys.setswitchinterval) in ms instead of the app's")
    args = parser.parse_args(argv)
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval / 1000)
    args.jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    unknown = [j for j in args.jobs if j not in JOBS]
    if unknown:
        parser.error(f"unknown job {', '.join(unknown)}: choose among {', '.join(JOBS)}")
    if not args.store.is_dir():
        parser.error(f"no store at {args.store}")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    print(f"heartbeat {BEAT_MS} ms on the GUI thread; thread switch interval {sys.getswitchinterval() * 1000:g} ms; "
          f"{os.cpu_count()} cores; {_load()}", flush=True)
    run_jobs(args)
    os._exit(0)  # the figures are out; skip tearing down the workers and Qt


if __name__ == "__main__":
    sys.exit(main())
