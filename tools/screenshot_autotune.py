"""Screenshots of the Auto-tune tab mid-run and of the Apply diff dialog, from the real app under
Xvfb (as `tools/screenshot.py` takes the main window), at 1280×720.

    python -m tools.screenshot_autotune --store /work/stores/locomo \\
        --questions ../shared/datasets/locomo/locomo-dev.json [--out-dir docs/screenshots]

Writes `autotune.png`: the Evaluation dock undocked to 1280×720 on its Auto-tune tab while a
train/test search runs (one knob locked in the search space), the trials so far in the table
and the History plot, the progress with its measured rate and ETA; and `apply-diff.png`: after
Cancel keeps the best so far, Apply best… on a question of the set on screen — the settings that
change and the rank movement they cause on a query of our own words (`--query`, asked of the
first user: no dataset text in the picture); and `autotune-choice.png`: a finished k-fold
cross-validation over every user (`--cv-trials` per fold), the choice among the start, every preset
and the search (each one's cross-validated figure, the chosen one marked, why). The app home is a
temporary folder; without --store the demo store is built there first (and the demo questions are used).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tools.screenshot import _settle, _wait, open_window, under_xvfb
from memsense_gui.views.dock import DockId

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "docs" / "screenshots"
SIZE = (1280, 720)
QUERY = "When did she go to a support meeting?"
MID_RUN = 60
"""Trials scored before the mid-run picture."""


def _until(app, condition, timeout_s: float = 900.0) -> bool:
    import time

    end = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < end:
        _settle(app, 100)
    return bool(condition())


def take(store: Path | None, questions: Path | None, out_dir: Path, query: str, cv_trials: int = 40) -> list[Path]:
    app, window = open_window(store, SIZE)
    dock = window.docks[DockId.EVALUATION]
    view = dock.view
    if questions is not None:
        view.source.set_path(questions)
    window.queries.open_question(window.ctx.users[0], query)  # a query on screen: the movement
    _wait(app, window.ctx.ranking_updated)
    panel = view.autotune
    view.tabs.setCurrentWidget(panel)
    panel.folds_spin.setValue(1)
    panel.trials_spin.setValue(400)
    panel.space_editor.lock("mmr_lambda")
    dock.setFloating(True)
    dock.resize(*SIZE)
    dock.show()
    panel.start()
    if not _until(app, lambda: panel.model.rowCount() >= MID_RUN and "trials/s" in panel.eta_label.text()):
        raise SystemExit(f"screenshot: no {MID_RUN} trials yet: {panel.status.text()}")
    out_dir.mkdir(parents=True, exist_ok=True)
    shots = [out_dir / "autotune.png", out_dir / "apply-diff.png"]
    _settle(app, 300)
    dock.grab().save(str(shots[0]))
    panel.cancel()
    _wait(app, panel.tuning_finished)
    dock.setFloating(False)
    panel.offer_apply()
    dialog = window.applying.dialog
    _until(app, lambda: dialog.moves_table.rowCount() > 0, 300.0)  # the deeper route lists ranked
    _settle(app, 500)
    dialog.grab().save(str(shots[1]))
    dialog.reject()
    shots.append(_choice(app, window, dock, panel, out_dir, cv_trials))
    window.close()
    return shots


def _choice(app, window, dock, panel, out_dir: Path, trials: int) -> Path:
    """A cross-validation over every user to its end: the choice among the configs on screen."""
    import time

    panel.space_editor.lock("mmr_lambda", False)
    panel.folds_spin.setValue(min(5, len(window.ctx.users)))
    panel.trials_spin.setValue(trials)
    dock.setFloating(True)
    dock.resize(*SIZE)
    dock.show()
    started = time.perf_counter()
    panel.start()
    _wait(app, panel.tuning_finished, 3600.0)
    print(f"cross-validation: {panel.folds_spin.value()} folds x {trials} trials in {time.perf_counter() - started:.0f} s")
    _settle(app, 500)
    path = out_dir / "autotune-choice.png"
    dock.grab().save(str(path))
    dock.setFloating(False)
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="an existing store (default: build the demo store)")
    parser.add_argument("--questions", type=Path, help="the question file (default: the demo questions)")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--query", default=QUERY, help="the query on screen when Apply best… is offered")
    parser.add_argument("--cv-trials", type=int, default=40, help="trials per fold of the cross-validation shown")
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb(["-m", "tools.screenshot_autotune", *argv], cwd=ROOT, PYTHONPATH=str(ROOT))
    for path in take(args.store, args.questions.resolve() if args.questions else None, args.out_dir.resolve(), args.query,
                     args.cv_trials):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
