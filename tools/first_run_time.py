"""How long the app takes to a usable window on its first run, and on a restart after it.

Both runs start the real app (`memsense_gui.app.create_window`, offscreen) in a new process with
its data folder (`MEMSENSE_GUI_HOME`) and cache folder (`MEMSENSE_CACHE`) pointed at a fresh
temporary folder: the first run finds no ONNX copy of the model, no embedding cache and no demo
store; the restart finds all three. "Usable" is the demo store open with its users listed and
the embedding model loaded (the status bar's "model: ready"): a query is answered at once.
The time is measured from the process's launch, so Python's and Qt's start-up count. The
first-run screen's own step times are printed too: what the user watched meanwhile.

    python tools/first_run_time.py [--keep DIR] [--timeout 600]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

USABLE = "usable"


def child() -> int:
    """Run the app until it is usable; print one JSON line with what it showed."""
    from PySide6.QtCore import QTimer

    from memsense_gui.app import create_window
    from memsense_gui.views.first_run import FirstRunDialog

    app, window = create_window(["memsense-gui"])
    seen: dict = {"first_run_screen": False, "steps_ms": {}}

    def watch() -> None:
        dialog = window.stores.progress
        if isinstance(dialog, FirstRunDialog):
            seen["first_run_screen"] = True
            seen["steps_ms"] = dict(dialog.took)
            seen["model_exported_before"] = dialog.model_ready

    timer = QTimer()
    timer.timeout.connect(watch)
    timer.start(100)

    def usable() -> None:
        watch()
        seen.update(store=window.ctx.location, users=len(window.ctx.users), status=window.model_label.text())
        print(USABLE, json.dumps(seen), flush=True)
        app.exit(0)

    window.ctx.model_loaded.connect(usable)
    window.ctx.error_reported.connect(lambda text: (print("error", json.dumps(text), flush=True), app.exit(1)))
    return app.exec()


def run(env: dict[str, str], timeout: float) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(USABLE):
                elapsed = time.perf_counter() - start
                proc.wait(timeout)
                return elapsed, json.loads(line.split(" ", 1)[1])
            if line.startswith("error"):
                raise SystemExit(f"first_run_time: the app reported an error: {line.split(' ', 1)[1].strip()}")
        raise SystemExit(f"first_run_time: the app exited ({proc.wait()}) before it was usable")
    finally:
        if proc.poll() is None:
            proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--keep", type=Path, help="use (and keep) this folder instead of a temporary one")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    if args.child:
        return child()
    with tempfile.TemporaryDirectory(prefix="memsense-first-run-") as tmp:
        root = args.keep or Path(tmp)
        env = {**os.environ, "MEMSENSE_GUI_HOME": str(root / "home"), "MEMSENSE_CACHE": str(root / "cache"),
               "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
        first, seen_first = run(env, args.timeout)
        again, seen_again = run(env, args.timeout)
    steps = ", ".join(f"{k} {v / 1000:.1f} s" for k, v in seen_first["steps_ms"].items())
    print(f"first run to a usable window: {first:.1f} s (first-run screen shown: {seen_first['first_run_screen']}; "
          f"ONNX copy there before: {seen_first.get('model_exported_before')}; steps: {steps or 'none'})")
    print(f"restart to a usable window:   {again:.1f} s (first-run screen shown: {seen_again['first_run_screen']})")
    print(f"store {seen_again['store']}, {seen_again['users']} users, {seen_again['status']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
