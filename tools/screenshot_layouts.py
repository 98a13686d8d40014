"""Screenshots of the five task layouts at 1280×720 from the real app under Xvfb (as
`tools/screenshot.py` takes the main window), each switched to as a user does (the layouts'
toolbar) on the demo store and its questions.

    python -m tools.screenshot_layouts [--store DIR] [--questions FILE] [--out-dir docs/screenshots] [--trials 60] \
        [--start-memsense | --memsense-database postgresql://… --memsense-embedder URL --memsense-service URL]

Writes `layout-inspect.png` (the first demo question, its gold sessions starred, a missed one
pinned in Why not?, the first result graded 3), `explain-tree.png` (the same layout, Explain's
Formula tree of the second result), `layout-evaluate.png` (every preset evaluated, memsense against bm25_only,
one question opened in the A/B list), `layout-diagnose.png` (the question set diagnosed),
`layout-tune.png` (Find a fix on the failing cases of the diagnosis), `case-runs.png` and
`question-picker.png` (the rating loop), and `layout-production.png`: the Production layout
connected to a live Memsense (File > Connect to Memsense…, as `tools/screenshot_memsense.py`
connects) with the first demo question run, the service's results beside the app's. Give a
running Memsense (`--memsense-database`, `--memsense-embedder`, `--memsense-service`) or
`--start-memsense` (a real one started here, fed the demo conversations, stopped at the end);
without either the Production layout is taken unconnected (Results and Tuning only). The app
home is a temporary folder, so your settings are untouched.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from any folder: the project first

from tools.screenshot import _settle, until, _wait, open_window, under_xvfb  # noqa: E402
from memsense_gui.views.connect import MemsenseConnection  # noqa: E402
from tools.screenshot_memsense import (add_memsense_arguments, ask_production,  # noqa: E402
                                       check_memsense_arguments, memsense_connection)

DEFAULT_DIR = ROOT / "docs" / "screenshots"
SIZE = (1280, 720)
WAIT_S = 900.0
"""The longest wait for the app's work before the run stops."""
FIX_CASES = 5
MEMSENSE = "memsense-"
"""The prefix of the live Memsense's options (--memsense-database …)."""


def _grab(app, window, path: Path) -> Path:
    _settle(app, 600)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(path)):
        raise SystemExit(f"screenshot: cannot write {path}")
    return path


def take(store: Path | None, questions: Path, out_dir: Path, trials: int,
         memsense: MemsenseConnection | None = None) -> list[Path]:
    """Every layout's screenshot; `memsense` (a MemsenseConnection, or None) is connected last, for
    the Production layout, since it replaces the store the others are taken on."""
    from PySide6.QtCore import QItemSelectionModel

    from memsense_gui.views.dock import DockId
    from memsense_gui.window.failures_actions import install_failures
    from memsense_gui.window.layouts import Layout

    app, window = open_window(store, SIZE)
    failures = install_failures(window)
    layouts, shots = window.layouts, []

    def switch(layout: Layout) -> None:
        layouts.actions[layout].trigger()  # as the toolbar's button does
        _settle(app, 300)

    # Inspect: a demo question, its gold sessions starred, a missed one pinned in Why not?
    q = json.loads(questions.read_text())["questions"][0]
    gold = sorted({e.split(":")[0][1:] for e in q["evidence"]}, key=int)
    window.queries.open_question(q["user"], q["question"], set(gold))
    _wait(app, window.ctx.ranking_updated)
    ranking = window.ctx.session.ranking
    missed = [c.memory_id for c in ranking.pool.chunks
              if c.kind == "session" and str(c.session_number) in gold and c.memory_id not in ranking.result_ids]
    window.raise_dock(DockId.WHY_NOT)
    for mid in missed:
        window.ctx.session.pin(mid)
    window.results.view.selectRow(0)
    window.results.view.setFocus()
    window.judging.grade_selected(3)  # as the 3 key does: the Grade column shows it
    shots.append(_grab(app, window, out_dir / "layout-inspect.png"))

    # Explain: the second result's score as a tree of its formula (its MMR pick over Final over RRF)
    window.raise_dock(DockId.EXPLAIN)
    window.results.view.selectRow(1)
    shots.append(_grab(app, window, out_dir / "explain-tree.png"))

    # Evaluate: every preset on the questions, memsense (A) against bm25_only (B)
    switch(Layout.EVALUATE)
    view = window.docks[DockId.EVALUATION].view
    view.source.set_path(questions)
    view.start()
    until(app, lambda: bool(view.results) and not view.runner.busy, WAIT_S)
    view.metric_combo.setCurrentText("recall_all@4")
    view.a_combo.setCurrentText("memsense")
    view.b_combo.setCurrentText("bm25_only")
    if view.diff_table.model().rowCount():
        view.diff_table.selectRow(0)
    shots.append(_grab(app, window, out_dir / "layout-evaluate.png"))

    # Diagnose: the question set under the current settings
    switch(Layout.DIAGNOSE)
    failures.source.set_path(questions)
    failures.diagnose()
    diagnose = failures.diagnose_view
    until(app, lambda: diagnose.run is not None, WAIT_S)
    diagnose.table.selectRow(0)
    shots.append(_grab(app, window, out_dir / "layout-diagnose.png"))

    # Tune: Find a fix on the first failing cases the diagnosis lists
    selection = diagnose.table.selectionModel()
    selection.clearSelection()
    chosen: list[str] = []
    for r in range(diagnose.proxy.rowCount()):
        index = diagnose.proxy.index(r, 0)
        qid = diagnose.model.item(diagnose.proxy.mapToSource(index).row()).question_id
        if qid not in chosen and len(chosen) < FIX_CASES:
            chosen.append(qid)
            selection.select(index, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    fix = failures.fix_view
    fix.trials.setValue(trials)
    switch(Layout.TUNE)
    if chosen:
        diagnose.request_fix()
        until(app, lambda: fix.run is not None, WAIT_S)
    shots.append(_grab(app, window, out_dir / "layout-tune.png"))

    # The rating loop: the picker's pass or fail in the last kept run, a case's metric run by run
    until(app, lambda: len(window.picker.runs.runs) >= 2, WAIT_S)
    switch(Layout.EVALUATE)
    cases = window.cases_panel
    until(app, lambda: cases.model.rowCount() > 0, WAIT_S)
    cases.select_row(0)
    shots.append(_grab(app, window.docks[DockId.CASES], out_dir / "case-runs.png"))
    shots.append(_grab(app, window.picker.show_list(), out_dir / "question-picker.png"))
    window.picker.list.hide()

    # Production: the same question asked of the live Memsense and reproduced from its database
    switch(Layout.PRODUCTION)
    if memsense is not None:
        print(ask_production(app, window, memsense, q["user"], q["question"], gold))
    shots.append(_grab(app, window, out_dir / "layout-production.png"))
    window.close()
    return shots


def main(argv: list[str] | None = None) -> int:
    from core.recall.engine import DEMO_QUESTIONS

    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshots of the five task layouts at 1280×720 under Xvfb.")
    parser.add_argument("--store", type=Path, help="an existing store (default: build the demo store)")
    parser.add_argument("--questions", type=Path, default=Path(DEMO_QUESTIONS))
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--trials", type=int, default=60)
    add_memsense_arguments(parser, MEMSENSE)
    args = parser.parse_args(argv)
    check_memsense_arguments(parser, args, MEMSENSE, required=False)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb(["-m", "tools.screenshot_layouts", *argv], cwd=ROOT)
    store = args.store.resolve() if args.store else None
    with memsense_connection(args, MEMSENSE) as conn:
        for path in take(store, args.questions.resolve(), args.out_dir.resolve(), args.trials, conn):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
