"""Screenshot of the Auto-tune tab watching a shared study (issue 38) while a `memsense tune
--storage FILE --study NAME` worker process fills it, from the real app under Xvfb at 1280×720.

    python -m tools.screenshot_study_watch [--store DIR] [--out docs/screenshots/autotune-watch.png]

The worker runs on the demo questions (train demo-ana, 400 trials) into a journal file in a
temporary folder; the Evaluation dock, undocked to 1280×720 on its Auto-tune tab, attaches to the
study (Watch a study…) and the picture is taken once 40 or more trials have arrived, the worker
still running; the worker is then stopped. Without --store the demo store is built first.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.screenshot import _settle, open_window, under_xvfb, until
from memsense_gui.views.dock import DockId

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "docs" / "screenshots" / "autotune-watch.png"
SIZE = (1280, 720)
SHOWN = 40


def take(store: Path | None, out: Path) -> Path:
    from core.recall.engine import DEMO_QUESTIONS

    app, window = open_window(store, SIZE)
    store = Path(window.ctx.location or "")
    journal = Path(tempfile.mkdtemp(prefix="memsense-watch-")) / "team.journal"
    worker = subprocess.Popen([sys.executable, "-m", "core.cli.main", "tune", str(DEMO_QUESTIONS), "--store",
                               str(store), "--train", "demo-ana", "--trials", "400", "--jobs", "1", "--quiet",
                               "--sensitivity-points", "0", "--storage", str(journal), "--study", "team"],
                              cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL)
    try:
        dock = window.docks[DockId.EVALUATION]
        panel = dock.view.autotune
        dock.view.tabs.setCurrentWidget(panel)
        dock.setFloating(True)
        dock.resize(*SIZE)
        dock.show()
        until(app, lambda: journal.exists() and b'"team"' in journal.read_bytes(), 300, "the worker's study")
        panel.watcher.attach(str(journal), "team")
        shown = lambda: panel.model.rowCount() >= SHOWN and "trials/s" in panel.eta_label.text()  # noqa: E731
        until(app, lambda: shown() or "Cannot watch" in panel.status.text(), 600, f"{SHOWN} trials shown")
        if not shown():
            raise SystemExit(f"screenshot: no {SHOWN} trials shown: {panel.status.text()}")
        _settle(app, 300)
        out.parent.mkdir(parents=True, exist_ok=True)
        dock.grab().save(str(out))
    finally:
        worker.kill()
        worker.wait(30)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="an existing store (default: build the demo store)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb(["-m", "tools.screenshot_study_watch", *argv], cwd=ROOT, PYTHONPATH=str(ROOT))
    print(take(args.store.resolve() if args.store else None, args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
