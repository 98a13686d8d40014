"""Screenshots of the Impact and History views and of File > Export report, from the real app under
Xvfb (as `tools/screenshot.py` takes the main window), the window at 1280×720 in its default
layout, docks moved only by dragging their edges (`resizeDocks`) and raising tabs.

    python -m tools.screenshot_runs --store STORE --questions QUESTIONS [--limit 1000] \\
        [--b top_rank_bonus] [--out-dir docs/screenshots]

The queries of the Impact view are the question texts of QUESTIONS (LoCoMo JSON or the project's
question files), at most --limit, written as USER<TAB>QUERY lines to a temporary file: real queries,
used unjudged. A is Memsense's defaults, B the preset --b. The History view shows the runs kept
beside the store: two evaluations of QUESTIONS made here (the second with --b as the current
settings), compared question by question. The history is written beside STORE (`<store>.history.sqlite`):
point --store at a copy of a shared store. Prints the Impact run's time beside core's own
`impact` on the same queries and engine, measured in the same run.

Writes `impact.png`, `history.png` and `report-dialog.png` (the dialog alone); then, with three
more evaluations (--more presets as the current settings), `runs.png`: the Runs view with five
runs selected side by side (its Compare tab, the matrix filtered to the questions that changed),
printing how long the comparison took from the selection to the figures on screen.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from tools.screenshot import _settle, _wait, open_window, under_xvfb
from memsense_gui.views.dock import DockId

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "docs" / "screenshots"
SIZE = (1280, 720)


def query_file(questions: Path, limit: int) -> Path:
    """USER<TAB>QUERY lines: every question of a LoCoMo file (judged or not, as real queries would
    be), else the questions of a question file."""
    import json

    from core.evaluation.judged import load_question_set

    data = json.loads(questions.read_text(encoding="utf-8"))
    pairs = ([(s["sample_id"], qa["question"]) for s in data for qa in s.get("qa", [])] if isinstance(data, list)
             else [(q.user_id, q.text) for q in load_question_set(questions)])
    path = Path(tempfile.mkdtemp(prefix="memsense-queries-")) / "queries.tsv"
    lines = [f"{user}\t{' '.join(text.split())}\n" for user, text in pairs[:limit]]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _make_room(window, dock_id: DockId, share: float = 0.7) -> None:
    from PySide6.QtCore import Qt

    window.raise_dock(dock_id)
    window.resizeDocks([window.docks[dock_id]], [int(window.height() * share)], Qt.Orientation.Vertical)


def _evaluate_under(app, window, evaluation, presets) -> None:
    """One Evaluation run with each preset as the current settings, each kept and listed before the next."""
    for preset in presets:
        window.tuning.apply_preset(preset)
        window.ctx.current.flush()
        evaluation.start()
        _wait(app, window.ctx.runs.recorded, 600)
        _wait(app, window.ctx.runs.listed, 60)


def take(store: Path, questions: Path, limit: int, b: str, out_dir: Path,
         more: tuple[str, ...] = ("sessions", "bm25_only", "fusion_note")) -> list[Path]:
    from PySide6.QtCore import Qt

    from core.config.presets import BUILTIN
    from core.evaluation.impact import impact, read_queries
    from memsense_gui.models.impact import RBO

    app, window = open_window(store, SIZE)
    out_dir.mkdir(parents=True, exist_ok=True)
    shots = []

    view = window.docks[DockId.IMPACT].view
    queries = query_file(questions, limit)
    view.set_queries(queries)
    view.a_choice.choose("preset", "memsense")
    view.b_choice.choose("preset", b)
    _make_room(window, DockId.IMPACT)
    engine = window.ctx.engine  # core's impact first, on the engine's thread: it embeds every query once
    started = time.perf_counter()
    direct = window.ctx.engine_runner.executor.submit(
        impact, lambda u, q, d: engine.recall(u, q, d), read_queries(str(queries)), BUILTIN["memsense"],
        BUILTIN[b]).result()
    core_s = time.perf_counter() - started
    started = time.perf_counter()
    view.start()
    _wait(app, view.impact_finished, 600)
    app_s = time.perf_counter() - started
    same = direct.to_json() == view.impact.to_json()
    print(f"impact on {len(direct.queries)} queries: core's impact on the open engine {core_s:.1f} s (embedding "
          f"every query), then the app's Impact view {app_s:.1f} s (queries embedded already); same figures: {same}")
    view.table.sortByColumn(RBO, Qt.SortOrder.AscendingOrder)
    view.table.selectRow(0)
    _settle(app)
    shots.append(out_dir / "impact.png")
    window.grab().save(str(shots[-1]))

    evaluation = window.docks[DockId.EVALUATION].view
    evaluation.source.set_path(questions)
    history = window.docks[DockId.HISTORY].view
    _evaluate_under(app, window, evaluation, ("memsense", b))
    ids = [r.id for r in history.runs_model.runs][-2:]
    _make_room(window, DockId.HISTORY)
    history.metric_combo.setCurrentText("recall_all@4")
    history.select_runs(ids)
    history.config_a.setCurrentText("current settings")
    history.config_b.setCurrentText("current settings")
    history.diff_table.sortByColumn(3, Qt.SortOrder.AscendingOrder)  # B − A: the questions B lost first
    _settle(app)
    shots.append(out_dir / "history.png")
    window.grab().save(str(shots[-1]))

    _evaluate_under(app, window, evaluation, more)
    five = [r.id for r in history.runs_model.runs][-5:]
    panel = history.comparison
    history.select_runs([])
    _settle(app, 200)
    started = time.perf_counter()
    history.select_runs(five)
    while panel.result is None or panel.status.text().startswith("Comparing"):
        _settle(app, 5)
    _settle(app, 0)
    print(f"comparing 5 runs ({len(panel.result.figures)} sides, {len(panel.result.questions)} questions): "
          f"{time.perf_counter() - started:.2f} s from the selection to the figures on screen")
    panel.changed_check.setChecked(True)
    history.tabs.setCurrentWidget(panel)
    _settle(app)
    shots.append(out_dir / "runs.png")
    window.grab().save(str(shots[-1]))

    action = next(a for a in window.menus.file.actions() if a.text() == "Export &report…")
    action.trigger()
    from memsense_gui.window.run_actions import report_dialogs

    dialog = report_dialogs(window)[0]
    dialog.b_choice.choose("preset", b)
    dialog.path_edit.setText(str(out_dir / "report"))
    _settle(app)
    shots.append(out_dir / "report-dialog.png")
    dialog.grab().save(str(shots[-1]))
    dialog.reject()
    window.close()
    return shots


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="the store (its history is written beside it)")
    parser.add_argument("--questions", type=Path, required=True, help="questions: the Impact queries and the evaluations")
    parser.add_argument("--limit", type=int, default=1000, help="at most this many queries (default 1000)")
    parser.add_argument("--b", default="top_rank_bonus", help="the preset of B (default top_rank_bonus)")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb(["-m", "tools.screenshot_runs", *argv], cwd=ROOT, PYTHONPATH=str(ROOT))
    for path in take(args.store.resolve(), args.questions.resolve(), args.limit, args.b, args.out_dir.resolve()):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
