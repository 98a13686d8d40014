"""Screenshot of the Production view: a live Memsense service's results beside the app's, taken
from the real app under Xvfb, connected through File > Connect to Memsense….

    python tools/screenshot_memsense.py --database postgresql://… --embedder URL --service URL \\
        [--user demo-ana] [--question "…"] [--out resources/screenshots/production.png]

Needs a running Memsense (for example ../shared/tools/memsense-service fed the demo
conversations). The app home is a temporary folder, so your settings are untouched.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from any folder: the project first

from tools.screenshot import SIZE, _settle, _wait, under_xvfb  # noqa: E402
from memsense_gui.views.dock import DockId  # noqa: E402

DEFAULT_OUT = ROOT / "resources" / "screenshots" / "production.png"


def take(args: argparse.Namespace) -> Path:
    os.environ["MEMSENSE_GUI_HOME"] = tempfile.mkdtemp(prefix="memsense-screenshot-")
    from PySide6.QtWidgets import QApplication

    from memsense_gui.state import paths
    from memsense_gui.views.connect import MemsenseConnection
    from memsense_gui.window.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    app.setApplicationDisplayName("memsense")
    home = paths.app_home()
    window = MainWindow(home, paths.settings(home))
    window.resize(*SIZE)
    window.show()
    window.default_layout()
    window.memsense.open(MemsenseConnection(args.database, args.tenant, args.scope, args.embedder, args.service))
    _wait(app, window.ctx.model_loaded, 120)
    window.user_combo.setCurrentText(args.user)
    window.query_edit.setText(args.question)
    window.queries.run_query()
    _wait(app, window.ctx.ranking_updated, 120)
    panel = window.memsense.panel
    for _ in range(100):
        if "production and reproduction" in panel.summary.text():
            break
        _settle(app, 200)
    window.raise_dock(DockId.PRODUCTION)
    window.results.view.selectRow(0)
    _settle(app)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(args.out)):
        raise SystemExit(f"screenshot: cannot write {args.out}")
    print(panel.summary.text())
    window.close()
    return args.out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshot of the Production view under Xvfb.")
    parser.add_argument("--database", required=True)
    parser.add_argument("--tenant", default="default")
    parser.add_argument("--scope", default="user")
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--user", default="demo-ana")
    parser.add_argument("--question", default="How many races has Ana run in 2024?")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb([__file__, *argv])
    print(take(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
