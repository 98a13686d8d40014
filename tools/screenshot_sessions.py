"""Screenshot of the main window on a LoCoMo question with the session routes on (issue 22).

    python tools/screenshot_sessions.py --store STORES/locomo [--out docs/screenshots/session-routes.png]

Like tools/screenshot.py (the real app under Xvfb, a temporary app home), at 1280×720: LoCoMo
`conv-26`, "What books has Melanie read?" (a multi-hop list question), ranked by the `sessions`
preset, so the Results, the route matrix (with its s-lex and s-dense columns) and the sliders
show the session routes; the MMR trace shows the rows skipped as "same session".
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.screenshot import _settle, _wait, open_window, under_xvfb  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "screenshots" / "session-routes.png"
USER, QUESTION = "conv-26", "What books has Melanie read?"


def take(store: Path, out: Path) -> Path:
    app, window = open_window(store, (1280, 720))
    window.queries.open_question(USER, QUESTION, set())
    _wait(app, window.ctx.ranking_updated)
    window.tuning.apply_preset("sessions")
    window.ctx.current.flush()
    window.results.view.selectRow(0)
    window.results.view.setFocus()
    _settle(app, 800)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(out)):
        raise SystemExit(f"screenshot: cannot write {out}")
    window.close()
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshot of the session routes on a LoCoMo question, under Xvfb.")
    parser.add_argument("--store", type=Path, required=True, help="a store built from LoCoMo dev")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb([__file__, *argv])
    print(take(args.store, args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
