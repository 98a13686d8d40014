"""Screenshot of the first minute at 1280×720 from the real app under Xvfb: a first start (a fresh
app home, no settings) opens the demo store in the Inspect layout with its first question run,
its gold sessions starred and a missed one in Why not?, and the layout's line beside the menus.

    python -m tools.screenshot_first_start [--out docs/screenshots/first-start.png]

The demo store is built into the temporary home first (as the first-run screen builds it), then
the window starts as `memsense-gui` does (`memsense_gui.app.create_window`): last layout (Inspect
on a first start), then the store (`StoreActions.start`).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from any folder: the project first

from tools.screenshot import _settle, _wait, save_shot, start_app, under_xvfb, until  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "screenshots" / "first-start.png"
SIZE = (1280, 720)


def take(out: Path) -> Path:
    # the demo store built first (what the first-run screen does, without its dialog); the last layout, Inspect
    # on a first start, restored; then laid out at the laptop's size, as a first start on a 1280×720 screen is
    app, window, *_ = start_app(SIZE, demo=True, failures=True, restore=True)
    window.stores.start()  # no settings: the demo opens and its first question runs
    _wait(app, window.ctx.ranking_updated)
    until(app, lambda: bool(window.ctx.session.pins) or "gold session" in window.statusBar().currentMessage(), 60,
          "the first question's gold sessions")
    _settle(app, 800)
    return save_shot(window, out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshot of a first start at 1280×720 under Xvfb.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb(["-m", "tools.screenshot_first_start", *argv], cwd=ROOT)
    print(take(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
