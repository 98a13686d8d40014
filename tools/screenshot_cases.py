"""Screenshots of the case list, "What would it take" and an A/B question, from the real app
under Xvfb (as `tools/screenshot.py` takes the main window), the window at 1280×720 in its
default layout, docks moved only by dragging their edges (`resizeDocks`) and raising tabs.

    python -m tools.screenshot_cases [--store DIR] [--out-dir resources/screenshots]

Writes `cases.png` (the demo questions as cases, pass or fail under Memsense's defaults; a
failing case opened in the inspector: its expected answer and evidence in the case list, its
returned gold session in the Chunk panel with the evidence turn highlighted),
`what-would-it-take.png` (the case's missed gold session pinned in "Why not?" with the verified
single-knob changes that bring it in) and `ab-question.png` (the same question in the
Evaluation view's A/B tab, memsense against bm25_only, the view undocked at 1280×720). The app
home is a temporary folder; without --store the demo store is built there first.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tools.screenshot import _settle, _wait, open_window, under_xvfb
from memsense_gui.views.dock import DockId

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "resources" / "screenshots"
SIZE = (1280, 720)


def _until(app, condition, timeout_s: float = 120.0) -> None:
    import time

    end = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < end:
        _settle(app, 100)


def take(store: Path | None, out_dir: Path) -> list[Path]:
    from PySide6.QtCore import Qt

    app, window = open_window(store, SIZE)
    panel = window.cases_panel
    window.raise_dock(DockId.CASES)
    window.raise_dock(DockId.ROUTE_RANKS)
    _settle(app)
    horizontal = Qt.Orientation.Horizontal
    window.resizeDocks([window.docks[DockId.CASES], window.docks[DockId.CHUNK]], [560, 380], horizontal)
    _until(app, lambda: panel.model.rowCount() and panel.model.counts()[1] == panel.model.rowCount())
    failing = next(r for r in range(panel.model.rowCount()) if panel.model.passed(r) is False)
    panel.select_row(failing)
    q = panel.model.question(failing)
    panel.open_selected()
    _wait(app, window.ctx.ranking_updated)
    ranking = window.ctx.session.ranking
    evidence = set(q.gold_turns)
    shown = next(r for r in range(window.results.model.result_count)
                 if evidence & set(window.results.model.chunk(r).dia_ids))
    window.results.view.selectRow(shown)  # a returned gold session: its evidence turn highlighted
    _settle(app)
    out_dir.mkdir(parents=True, exist_ok=True)
    shots = [out_dir / "cases.png", out_dir / "what-would-it-take.png"]
    window.grab().save(str(shots[0]))

    missed = next(c.memory_id for c in ranking.pool.chunks if c.kind == "session"
                  and c.session_number in q.gold_sessions and c.memory_id not in ranking.result_ids)
    window.raise_dock(DockId.WHY_NOT)
    window.raise_dock(DockId.TUNING)
    _settle(app)
    window.resizeDocks([window.docks[DockId.TUNING], window.docks[DockId.WHY_NOT]], [320, 580], horizontal)
    window.resizeDocks([window.docks[DockId.ROUTE_RANKS]], [110], Qt.Orientation.Vertical)  # room for the changes
    window.ctx.session.pin(missed)
    model = window.whynot_panel.whatif_model
    _until(app, lambda: model.answer is not None and model.answer.memory_id == missed)
    _settle(app)
    window.grab().save(str(shots[1]))

    view = window.docks[DockId.EVALUATION].view  # the A/B question: Evaluation undocked to 1280×720
    with_shot = out_dir / "ab-question.png"
    with_shot.unlink(missing_ok=True)
    view.start()
    _wait(app, view.evaluation_finished)
    view.a_combo.setCurrentText("memsense")
    view.b_combo.setCurrentText("bm25_only")
    view.metric_combo.setCurrentText("recall_all@4")
    view.ties_check.setChecked(True)
    row = next(r for r in view.diff_model.rows if r["question_id"] == q.question_id)
    view.show_ab(row)
    view.tabs.setCurrentWidget(view.ab_view)
    dock = window.docks[DockId.EVALUATION]
    dock.setFloating(True)
    dock.resize(*SIZE)
    dock.show()
    _settle(app, 800)
    dock.grab().save(str(with_shot))
    shots.append(with_shot)
    window.close()
    return shots


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="an existing store (default: build the demo store)")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb(["-m", "tools.screenshot_cases", *argv], cwd=ROOT, PYTHONPATH=str(ROOT))
    for path in take(args.store, args.out_dir.resolve()):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
