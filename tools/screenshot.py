"""Screenshot of the main window on a demo question, taken from the real app under Xvfb.

    python tools/screenshot.py [--store DIR] [--out resources/screenshots/main-window.png] [--dark]

Without a display it re-runs itself under `xvfb-run` with the xcb platform (the real X11
path, not the offscreen one). The app home is a temporary folder, so your settings and
presets are untouched; without --store the demo store is built there first (seconds when
the embeddings are cached, about a minute otherwise). The scene: the first demo question
with its gold sessions starred, lambda raised to show rank movement, the gold session that
missed the list pinned in "Why not?", the route-rank matrix below.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from any folder: the project first
DEFAULT_OUT = ROOT / "resources" / "screenshots" / "main-window.png"
QUESTION = 0  # "How many races has Ana run in 2024?": three gold sessions, one outside the top 4
SIZE = (1600, 1000)


def under_xvfb(command: list[str], cwd: Path | None = None, **env: str) -> int:
    """Re-run a screenshot tool (`command`: its script or `-m module`, then its arguments) under
    `xvfb-run` with the xcb platform, marked as the child so that it takes the picture."""
    if shutil.which("xvfb-run") is None:
        raise SystemExit("screenshot: xvfb-run is missing; install it with scripts/setup.sh (Debian package xvfb)")
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "MEMSENSE_SCREENSHOT_CHILD": "1", **env}
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1920x1200x24 -dpi 96", sys.executable, *command]
    return subprocess.call(cmd, env=env, cwd=cwd)


def _wait(app, signal, timeout_s: float = 300.0) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()


def _settle(app, ms: int = 400) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def until(app, condition, timeout_s: float, what: str = "the app", step_ms: int = 100) -> None:
    """Let the app run until `condition()` holds, looking every `step_ms`; past `timeout_s` the tool
    stops, saying what it waited for."""
    import time

    end = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < end:
        _settle(app, step_ms)
    if not condition():
        raise SystemExit(f"{Path(sys.argv[0]).stem}: timed out waiting for {what}")


class Started(NamedTuple):
    """The app, its window and the views installed on it (`start_app`)."""

    app: Any
    window: Any
    evaluation: Any
    runs: Any
    failures: Any  # None unless asked for


def start_app(size: tuple[int, int], dark: bool | None = None, *, demo: bool = False, failures: bool = False,
              restore: bool = False) -> Started:
    """The app and its window as `memsense_gui.app.create_window` builds them, in a fresh temporary home
    (your settings and presets untouched), shown and laid out at `size`, no store open yet. `demo`: the
    demo store is built in the home first (as the first-run screen builds it); `failures`: with the
    Diagnose and Find a fix docks; `restore`: the last layout (Inspect on a first start) restored first,
    as a start does; `dark`: the appearance set (None: the settings' own)."""
    os.environ["MEMSENSE_GUI_HOME"] = tempfile.mkdtemp(prefix="memsense-screenshot-")
    from PySide6.QtWidgets import QApplication

    from core.recall.engine import DEMO_DATASET, build_store
    from memsense_gui.state import paths
    from memsense_gui.window.evaluation import install_evaluation
    from memsense_gui.window.failures_actions import install_failures
    from memsense_gui.window.main_window import MainWindow
    from memsense_gui.window.run_actions import install_runs

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationDisplayName("memsense")
    home = paths.app_home()
    if demo:
        build_store(DEMO_DATASET, paths.demo_store_dir(home))
    window = MainWindow(home, paths.settings(home))
    evaluation = install_evaluation(window)
    runs = install_runs(window, evaluation)  # as the app does
    fixes = install_failures(window) if failures else None
    if restore:
        window.restore_layout()
    window.resize(*size)
    window.show()
    if dark is not None:
        window.set_dark(dark)
    _settle(app, 200)  # as the app does, lay out once the window has its size: before, the docks take a
    window.default_layout()  # share of the size asked for and at 1280×720 Results showed 2½ of 4 rows
    return Started(app, window, evaluation, runs, fixes)


def open_window(store: Path | None, size: tuple[int, int], dark: bool = False):
    """The app's window in a fresh temporary home, laid out at `size`, with `store` (or the demo
    store, built first) open and its model loaded; returns (app, window)."""
    from memsense_gui.state import paths

    app, window, *_ = start_app(size, dark, demo=store is None)
    window.stores.open_store(store or paths.demo_store_dir(paths.app_home()))
    _wait(app, window.ctx.model_loaded)
    return app, window


def take(store: Path | None, out: Path, dark: bool) -> Path:
    from core.recall.engine import DEMO_QUESTIONS

    app, window = open_window(store, SIZE, dark)
    q = json.loads(Path(DEMO_QUESTIONS).read_text())["questions"][QUESTION]
    gold = sorted({e.split(":")[0][1:] for e in q["evidence"]}, key=int)
    window.queries.open_question(q["user"], q["question"], set(gold))
    _wait(app, window.ctx.ranking_updated)
    window.tuning.set_knob("mmr_lambda", 0.9)
    window.ctx.current.flush()
    ranking = window.ctx.session.ranking
    missed = [c.memory_id for c in ranking.pool.chunks
              if c.kind == "session" and str(c.session_number) in gold and c.memory_id not in ranking.result_ids]
    window.queries.focus_why_not()
    if not window.whynot_panel.search_model.chunk_count:
        _wait(app, window.ctx.chunks_loaded, 5)
    for mid in missed:
        window.ctx.session.pin(mid)
    window.whynot_panel.search.setText("race")
    window.results.view.selectRow(0)
    window.results.view.setFocus()
    _settle(app)
    return save_shot(window, out)


def save_shot(window, out: Path) -> Path:
    """Write the window's picture to `out` (its folder made), then close the window; `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(out)):
        raise SystemExit(f"screenshot: cannot write {out}")
    window.close()
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshot of the main window under Xvfb.")
    parser.add_argument("--store", type=Path, help="an existing store (default: build the demo store)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--dark", action="store_true", help="the dark appearance")
    args = parser.parse_args(argv)
    if not os.environ.get("MEMSENSE_SCREENSHOT_CHILD"):
        return under_xvfb([__file__, *argv])
    print(take(args.store, args.out.resolve(), args.dark))
    return 0


if __name__ == "__main__":
    sys.exit(main())
