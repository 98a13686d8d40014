"""Screenshots of every panel and dialog at 1280×720, from the real app under Xvfb.

    python tools/screenshot_panels.py [--out-dir docs/screenshots]

The X screen is 1280×720 and the window is laid out at that size in its default layout. The
app home is a temporary folder with no demo store, so the first start builds it on the
first-run screen (`first-run.png`, taken while it embeds; the ONNX copy of the model is taken
from your cache so the shot does not wait for an export, the embeddings are made afresh).
Then the first demo question is picked from the query box's list of judged questions
(`main-window.png`: its ranking, gold starred; its missed gold session pinned in Why not?),
every dock is raised in turn (`dock-<id>.png`), and the dialogs are opened: `glossary.png`
(at the term F1 on the Final column gives), `about.png`, `shortcuts.png`,
`connect-to-memsense.png`. Each file is a grab of what the user sees, at the size it has
on a 1280×720 screen.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from any folder: the project first
DEFAULT_DIR = ROOT / "docs" / "screenshots"
SIZE = (1280, 720)
CHILD = "MEMSENSE_SCREENSHOT_CHILD"


def _settle(ms: int = 400) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def _until(condition, timeout_s: float = 300.0) -> bool:
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            return False
        _settle(100)
    return True


def _save(widget, path: Path) -> Path:
    _settle()
    if not widget.grab().save(str(path)):
        raise SystemExit(f"screenshot_panels: cannot write {path}")
    print(path, flush=True)
    return path


def _save_screen(path: Path) -> Path:
    """The whole X screen (1280×720): the window and a popup over it, which a grab of the window
    leaves out."""
    from PySide6.QtGui import QGuiApplication

    _settle()
    if not QGuiApplication.primaryScreen().grabWindow(0).save(str(path)):
        raise SystemExit(f"screenshot_panels: cannot write {path}")
    print(path, flush=True)
    return path


def _fresh_cache(real: Path) -> Path:
    """A cache folder holding only the model's ONNX copies (no embeddings), from `real`."""
    cache = Path(tempfile.mkdtemp(prefix="memsense-shot-cache-"))
    if (real / "onnx").is_dir():
        shutil.copytree(real / "onnx", cache / "onnx")
    return cache


def take(out_dir: Path) -> list[Path]:
    from core.machine import cache_dir

    os.environ["MEMSENSE_CACHE"] = str(_fresh_cache(cache_dir()))
    os.environ["MEMSENSE_GUI_HOME"] = tempfile.mkdtemp(prefix="memsense-shot-home-")
    from PySide6.QtWidgets import QApplication

    from memsense_gui.state import paths
    from memsense_gui.views.dock import DockId
    from memsense_gui.views.first_run import FirstRunDialog
    from memsense_gui.window.evaluation import install_evaluation
    from memsense_gui.window.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    app.setApplicationDisplayName("memsense")
    home = paths.app_home()
    window = MainWindow(home, paths.settings(home))
    install_evaluation(window)
    window.resize(*SIZE)
    window.show()
    window.default_layout()
    out_dir.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []

    window.stores.start()  # the first start: the demo store is built on the first-run screen
    dialog = window.stores.progress
    assert isinstance(dialog, FirstRunDialog)
    _until(lambda: dialog.current == "embed" and dialog.embedded[0] > dialog.embedded[1] // 3, 600)
    shots.append(_save(dialog, out_dir / "first-run.png"))
    _until(lambda: window.ctx.model_ready and window.picker.questions, 600)

    window.query_edit.setFocus()
    listed = window.picker.show_list()
    shots.append(_save_screen(out_dir / "judged-questions.png"))
    assert listed is not None
    window.picker.pick(listed.item(0))
    _until(lambda: window.ctx.session.ranking is not None and bool(window.ctx.session.pins))
    window.results.view.selectRow(0)
    window.raise_dock(DockId.CHUNK)
    shots.append(_save(window, out_dir / "main-window.png"))

    for which in window.docks:
        window.raise_dock(which)
        if which == DockId.CASES:
            cases = window.cases_panel.model
            _until(lambda m=cases: m.rowCount() > 0 and m.counts()[1] == m.rowCount())
        if which == DockId.WHY_NOT:
            whatif = window.whynot_panel.whatif_model
            _until(lambda m=whatif: m.answer is not None, 120)
        shots.append(_save(window, out_dir / f"dock-{which.value}.png"))
    window.default_layout()
    window.raise_dock(DockId.CHUNK)

    from memsense_gui.window.help_actions import column_name

    view = window.results.view  # what F1 on the Final column opens (tests/gui/help drives the key itself)
    glossary = window.help.show_glossary(column_name(view.horizontalHeader(), window.results.model.FINAL))
    shots.append(_save(glossary, out_dir / "glossary.png"))
    glossary.close()
    about = window.help.show_about()
    _until(lambda: about.rows["Store format"].text() != "reading…", 30)
    shots.append(_save(about, out_dir / "about.png"))
    about.close()
    keys = window.show_shortcuts()
    shots.append(_save(keys, out_dir / "shortcuts.png"))
    keys.close()
    connect = window.memsense.ask_connect()
    shots.append(_save(connect, out_dir / "connect-to-memsense.png"))
    connect.reject()
    window.close()
    return shots


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Screenshots of every panel and dialog at 1280×720 under Xvfb.")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    if not os.environ.get(CHILD):
        if shutil.which("xvfb-run") is None:
            raise SystemExit("screenshot_panels: xvfb-run is missing; install it with scripts/setup.sh (Debian xvfb)")
        env = {**os.environ, "QT_QPA_PLATFORM": "xcb", CHILD: "1"}
        screen = f"-screen 0 {SIZE[0]}x{SIZE[1]}x24 -dpi 96"
        return subprocess.call(["xvfb-run", "-a", "-s", screen, sys.executable, __file__, *argv], env=env)
    take(args.out_dir.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
