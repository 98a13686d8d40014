"""Screenshots of Diagnose and Find a fix from the real app under Xvfb (as `tools/screenshot.py`
takes the main window), the window at 1280×720 in its default layout, the bottom docks dragged
taller (`resizeDocks`).

    python -m tools.screenshot_failures --store /work/stores/locomo \\
        --questions ../shared/datasets/locomo/locomo-dev.json [--out-dir docs/screenshots] [--trials 200]

Writes `diagnose.png` (the question set diagnosed under Memsense's defaults, the largest lost
stage's cases listed) and `fix.png` (Find a fix on five of those cases: the candidates and their
Pareto plot). The store is copied to a temporary folder first, so the runs these screenshots make
are kept in that copy's history, not beside the store; the app home is a temporary folder too.
Prints how long the diagnose and the search took.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tools.screenshot import _settle, until, open_window, under_xvfb
from memsense_gui.views.dock import DockId

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "docs" / "screenshots"
SIZE = (1280, 720)
WAIT_S = 1800.0
"""The longest wait for the app's work before the run stops."""
CASES = 5


def take(store: Path, questions: Path, out_dir: Path, trials: int) -> list[Path]:
    from PySide6.QtCore import QItemSelectionModel, Qt

    from core.evaluation.diagnose import RETURNED
    from memsense_gui.window.failures_actions import install_failures

    copy = Path(tempfile.mkdtemp(prefix="memsense-failures-")) / store.name
    shutil.copytree(store, copy)
    app, window = open_window(copy, SIZE)
    actions = install_failures(window)
    actions.source.set_path(questions)
    view, fix = actions.diagnose_view, actions.fix_view
    window.raise_dock(DockId.DIAGNOSE)
    _settle(app)
    window.resizeDocks([window.docks[DockId.DIAGNOSE]], [int(SIZE[1] * 0.62)], Qt.Orientation.Vertical)
    started = time.perf_counter()
    actions.diagnose()
    until(app, lambda: view.run is not None, WAIT_S)
    print(f"diagnose: {time.perf_counter() - started:.1f} s (recall of the question set included)")
    stages = view.run.diagnosis.stages
    stage = max((s for s in stages if s not in RETURNED), key=stages.__getitem__)
    view.show_segment(None, stage)
    view.table.selectRow(0)
    _settle(app, 600)
    out_dir.mkdir(parents=True, exist_ok=True)
    shots = [out_dir / "diagnose.png", out_dir / "fix.png"]
    window.grab().save(str(shots[0]))

    chosen: list[str] = []
    selection = view.table.selectionModel()
    selection.clearSelection()
    for r in range(view.proxy.rowCount()):
        index = view.proxy.index(r, 0)
        qid = view.model.item(view.proxy.mapToSource(index).row()).question_id
        if qid not in chosen and len(chosen) < CASES:
            chosen.append(qid)
            selection.select(index, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    fix.trials.setValue(trials)
    started = time.perf_counter()
    view.request_fix()
    until(app, lambda: fix.run is not None, WAIT_S)
    print(f"find a fix: {trials} trials on {fix.run.questions} questions in {time.perf_counter() - started:.1f} s "
          f"(jobs = {actions.jobs}); {len(fix.run.result.candidates)} candidates")
    window.resizeDocks([window.docks[DockId.FIX]], [int(SIZE[1] * 0.62)], Qt.Orientation.Vertical)
    _settle(app, 600)
    window.grab().save(str(shots[1]))
    window.close()
    return shots


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshots of Diagnose and Find a fix under Xvfb.")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb(["-m", "tools.screenshot_failures", *argv], cwd=ROOT)
    for path in take(args.store.resolve(), args.questions.resolve(), args.out_dir.resolve(), args.trials):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
