"""One recall per question set, timed: the app's Cases, Evaluation and Auto-tune on one question
file, and in-app auto-tune throughput beside `memsense tune`'s, for this code and a baseline.

    python tools/bench_question_set.py ../shared/datasets/locomo/locomo-dev.json --store /work/stores/locomo \\
        [--baseline-code /work/main] [--trials 200] [--train conv-26,conv-30,conv-41 --test conv-42,conv-43] \\
        [--storages 60]

For each code tree (the baseline first, when given, then this one), two fresh processes:
- the CLI: `memsense tune QUESTIONS --store S --train ... --test ... --trials N --sensitivity-points 0`
  through `core.cli.main`, its progress callback timed: recall seconds, and trials per second from
  the first trial reported to the last;
- the app, offscreen, on a fresh data dir: the store opened, the question file chosen in Cases, then
  1. Cases shown, until every case is scored;
  2. Evaluate pressed in the Evaluation view, until its results are shown;
  3. Tune pressed in its Auto-tune tab (the same train / held-out users, N trials, pool limits
     searched), until the first trial is reported ("Auto-tune start"), and trials per second from
     the first trial reported to the last.
With `--storages N`, this tree's `tune_tpe` runs N trials on the recalled pools with the study in
memory, in SQLite and in a journal file (`core.evaluation.study.file_storage`), the
trials per second of each.
Each child prints one JSON line; the load average is printed beside the figures.

Over the trials, both children also account for the CPU each trial takes: the thread that runs the
search (Optuna's TPE, tells, the study file), the worker processes that score (read from /proc),
and in the app the GUI thread. Their sum over the machine's cores is the fastest the trials could
go with every core busy: when the CLI runs near it, whatever the app adds on any thread (the
GUI's drawing, the study file it keeps) comes out of the trial rate.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent.parent


class Mark(NamedTuple):
    """A progress report, with the CPU seconds used so far by the thread that made it and by the
    worker processes alive then."""

    t: float
    done: int
    what: str
    cpu: float
    workers_cpu: float


def _mark(marks: list[Mark], done: int, total: int, what: str) -> None:
    marks.append(Mark(time.perf_counter(), done, what, time.thread_time(), _workers_cpu()))


def _workers_cpu() -> float:
    """CPU seconds (user and system) used so far by this process's live child processes: the
    tuning workers (fields 14 and 15 of /proc/PID/stat)."""
    ticks = 0
    for proc in multiprocessing.active_children():
        try:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it just ended
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _trials(marks: list[Mark]) -> list[Mark]:
    return [m for m in marks if m.what.startswith("trial")]


def _trial_rate(marks: list[Mark]) -> tuple[float | None, float | None]:
    """(time of the first trial report, trials per second from it to the last)."""
    trials = _trials(marks)
    if len(trials) < 2 or trials[-1].t == trials[0].t:
        return (trials[0].t if trials else None), None
    return trials[0].t, (trials[-1].done - trials[0].done) / (trials[-1].t - trials[0].t)


def _cpu_per_trial(marks: list[Mark]) -> tuple[float | None, float | None]:
    """Milliseconds of CPU a trial took, from the first trial report to the last: on the thread
    that made the reports, and in the worker processes."""
    trials = _trials(marks)
    n = trials[-1].done - trials[0].done if len(trials) > 1 else 0
    if not n:
        return None, None
    return (trials[-1].cpu - trials[0].cpu) * 1e3 / n, (trials[-1].workers_cpu - trials[0].workers_cpu) * 1e3 / n


def _search_cpu(marks: list[Mark]) -> dict[str, float | None]:
    """CPU a trial of marks made by the search's own thread: that thread's and the workers'."""
    search, workers = _cpu_per_trial(marks)
    return {"search_cpu_ms": search, "workers_cpu_ms": workers}


# ---- children ------------------------------------------------------------------------------------
def cli_child(args: argparse.Namespace) -> dict:
    from core.cli import output
    from core.cli.main import main

    marks: list[Mark] = []
    setattr(output, "progress_bar", lambda stream=None: partial(_mark, marks))  # noqa: B010 - mypy refuses the plain assignment
    t0 = time.perf_counter()
    code = main(["tune", args.questions, "--store", args.store, "--train", args.train, "--test", args.test,
                 "--trials", str(args.trials), "--sensitivity-points", "0", "--json"])
    wall = time.perf_counter() - t0
    recall = [m.t for m in marks if m.what == "recall"]
    first, rate = _trial_rate(marks)
    return {"part": "cli", "exit": code, "wall_s": wall, "recall_s": recall[-1] - recall[0] if recall else None,
            "first_trial_s": None if first is None else first - t0, "trials_per_s": rate, **_search_cpu(marks)}


def _wait_until(app, ready, timeout_s: float) -> None:
    """Run the event loop until `ready()`: in slices of an idle event loop, as the app waits (a
    loop of processEvents would hold the GIL the workers' threads need)."""
    from PySide6.QtCore import QEventLoop, QTimer

    end = time.perf_counter() + timeout_s
    while not ready():
        if time.perf_counter() > end:
            raise SystemExit("bench: timed out")
        loop = QEventLoop()
        QTimer.singleShot(50, loop.quit)
        loop.exec()


def app_child(args: argparse.Namespace) -> dict:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from memsense_gui.state import paths
    from memsense_gui.views.autotune import AutoTuneView
    try:
        from memsense_gui.views.dock import DockId  # docks by identifier (issue 17); by title before
    except ImportError:
        DockId = None  # type: ignore[assignment,misc]
    from memsense_gui.window.evaluation import install_evaluation
    from memsense_gui.window.main_window import MainWindow

    import core.evaluation.study as study

    marks: list[Mark] = []  # as the view is told, on the GUI thread: its CPU is the GUI thread's
    search: list[Mark] = []  # as the search reports, on its own thread
    shown, tune_tpe = AutoTuneView._progressed, study.tune_tpe

    def timed(self: AutoTuneView, done: int, total: int, what: str) -> None:
        _mark(marks, done, total, what)
        shown(self, done, total, what)

    def traced(*args: Any, **kwargs: Any) -> Any:
        told = kwargs.get("progress")
        if told is not None:
            def both(done: int, total: int, what: str) -> None:
                _mark(search, done, total, what)
                told(done, total, what)

            kwargs["progress"] = both
        return tune_tpe(*args, **kwargs)

    setattr(AutoTuneView, "_progressed", timed)  # noqa: B010 - before the view is made: its task slot takes the method
    setattr(study, "tune_tpe", traced)  # noqa: B010 - the app imports it when a search starts
    app = QApplication.instance() or QApplication(sys.argv[:1])
    home = Path(tempfile.mkdtemp(prefix="memsense-bench-qs-"))
    window = MainWindow(home, paths.settings(home))
    window.resize(1600, 1000)
    window.show()
    view = install_evaluation(window)
    tuner, source = view.autotune, view.source
    assert tuner is not None and source is not None
    finished: list = []
    view.evaluation_finished.connect(finished.append)
    view.evaluation_failed.connect(finished.append)
    tuner.tuning_finished.connect(finished.append)
    tuner.tuning_failed.connect(finished.append)
    window.stores.open_store(args.store)
    _wait_until(app, lambda: window.ctx.model_ready and window.ctx.engine is not None, 300)
    questions = Path(args.questions).resolve()
    out: dict[str, Any] = {"part": "app"}

    t0 = time.perf_counter()
    window.cases.source.set_path(questions)
    window.raise_dock(DockId.CASES) if DockId is not None else window.raise_dock("Cases")
    panel = window.cases_panel
    _wait_until(app, lambda: panel.model.rowCount() > 0 and panel.model.counts()[1] == panel.model.rowCount(), 900)
    out["cases_s"], out["cases"] = time.perf_counter() - t0, panel.model.rowCount()

    if source.path != questions:  # a view with its own question choice (before issue 17)
        source.set_path(questions)
    t0 = time.perf_counter()
    view.start()
    _wait_until(app, lambda: bool(finished), 900)
    out["evaluation_s"] = time.perf_counter() - t0
    if isinstance(finished[-1], BaseException):
        raise SystemExit(f"bench: evaluation failed: {finished[-1]}")

    tuner.folds_spin.setValue(1)
    tuner.trials_spin.setValue(args.trials)
    for box, users in ((tuner.train_list, args.train.split(",")), (tuner.test_list, args.test.split(","))):
        for i in range(box.count()):
            item = box.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in users else Qt.CheckState.Unchecked)
    finished.clear()
    t0 = time.perf_counter()
    tuner.start()
    _wait_until(app, lambda: bool(finished), 3600)
    if isinstance(finished[-1], BaseException):
        raise SystemExit(f"bench: tuning failed: {finished[-1]}")
    first, rate = _trial_rate(marks)
    out.update({"autotune_start_s": None if first is None else first - t0, "trials_per_s": rate,
                "autotune_s": time.perf_counter() - t0, "trials": len(finished[-1].trials),
                **_search_cpu(search), "gui_cpu_ms": _cpu_per_trial(marks)[0]})
    window.close()
    return out


def storages_child(args: argparse.Namespace) -> dict:
    """`tune_tpe` on the same pools with the study in memory, in SQLite and in a journal file."""
    from core.config import Config
    from core.evaluation.evaluate import judged_only, recall_pools
    from core.evaluation.judged import load_question_set
    from core.evaluation.question_set import planned_depth
    from core.evaluation.study import tune_tpe
    from core.evaluation.tune import ALL_KNOBS, seed_presets, split_users
    from core.recall.engine import Engine

    questions = judged_only(load_question_set(args.questions))
    start = Config()
    engine = Engine(args.store)
    try:
        pools = recall_pools(engine.recall, questions, planned_depth([start], start))
    finally:
        engine.close()
    train, test = split_users(questions, args.train.split(","), args.test.split(","))
    folder = Path(tempfile.mkdtemp(prefix="memsense-bench-studies-"))
    out: dict[str, Any] = {"part": "storages", "trials": args.storages}
    for name, storage in (("memory", None), ("sqlite", f"sqlite:///{folder / 'study.db'}"),
                          ("journal", folder / "study.journal")):
        marks: list[Mark] = []
        tune_tpe(pools, train, test, trials=args.storages, start=start, seeds=seed_presets(start), knobs=ALL_KNOBS,
                 storage=storage, study_name="bench" if storage else None, sensitivity_points=0, jobs=args.jobs,
                 progress=partial(_mark, marks))
        out[f"{name}_trials_per_s"] = _trial_rate(marks)[1]
    return out


# ---- the parent --------------------------------------------------------------------------------------
def run_child(part: str, code: Path, args: argparse.Namespace) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "QT_QPA_PLATFORM": "offscreen"}
    cmd = [sys.executable, str(Path(__file__).resolve()), args.questions, "--store", args.store, "--child", part,
           "--code", str(code), "--trials", str(args.trials), "--train", args.train, "--test", args.test,
           "--storages", str(args.storages), "--jobs", str(args.jobs)]
    done = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=7200)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-4000:])
        raise SystemExit(f"bench: the {part} child of {code} failed (exit {done.returncode})")
    return json.loads(lines[-1])


def _f(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.2f}{unit}"


def _cpu_line(child: dict) -> str:
    """A child's CPU per trial, by thread and process, and the rate it allows on every core."""
    parts = {"search": child.get("search_cpu_ms"), "workers": child.get("workers_cpu_ms"), "GUI": child.get("gui_cpu_ms")}
    known = {k: v for k, v in parts.items() if v is not None}
    if not known:
        return "-"
    total = sum(known.values())
    cores = os.cpu_count() or 1
    return (" + ".join(f"{k} {v:.1f}" for k, v in known.items()) + f" = {total:.1f} ms, "
            f"at most {cores * 1e3 / total:.1f} trials/s on {cores} cores")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions")
    ap.add_argument("--store", required=True)
    ap.add_argument("--baseline-code", type=Path, help="another tree of this project (e.g. /work/main) to time first")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--train", default="conv-26,conv-30,conv-41")
    ap.add_argument("--test", default="conv-42,conv-43")
    ap.add_argument("--storages", type=int, default=0, help="also time N trials per study storage (0 = skip)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes for --storages")
    ap.add_argument("--child", choices=("cli", "app", "storages"), help=argparse.SUPPRESS)
    ap.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.questions = str(Path(args.questions).resolve())
    if args.child:
        sys.path.insert(0, str(args.code))
        child = {"cli": cli_child, "app": app_child, "storages": storages_child}[args.child]
        print(json.dumps(child(args)), flush=True)
        os._exit(0)  # skip tearing down Qt and the model
    trees = ([("baseline " + str(args.baseline_code), args.baseline_code.resolve())] if args.baseline_code else [])
    trees.append(("this tree " + str(HERE), HERE))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")
    for label, code in trees:
        cli = run_child("cli", code, args)
        app = run_child("app", code, args)
        print(f"{label}:\n"
              f"  memsense tune: recall {_f(cli['recall_s'], ' s')}, first trial at {_f(cli['first_trial_s'], ' s')}, "
              f"{_f(cli['trials_per_s'])} trials/s ({args.trials} trials)\n"
              f"  app, {app['cases']} cases: Cases {_f(app['cases_s'], ' s')}, then Evaluation "
              f"{_f(app['evaluation_s'], ' s')}, then Auto-tune start {_f(app['autotune_start_s'], ' s')}; "
              f"auto-tune {_f(app['trials_per_s'])} trials/s ({app['trials']} trials in {_f(app['autotune_s'], ' s')})",
              flush=True)
        print(f"  CPU a trial: memsense tune {_cpu_line(cli)}; app {_cpu_line(app)}", flush=True)
        print(f"  load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if args.storages:
        st = run_child("storages", HERE, args)
        print(f"tune_tpe, {args.storages} trials, study in memory {_f(st['memory_trials_per_s'])} trials/s, in SQLite "
              f"{_f(st['sqlite_trials_per_s'])}, in a journal file {_f(st['journal_trials_per_s'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
