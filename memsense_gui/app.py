"""`memsense-gui`: the desktop app's entry point.

First run with no store: builds the demo store (with a progress dialog) into the per-user
data dir and opens it. Later runs reopen the last store at once; the embedding model loads in
the background. Window layout, appearance and last query are remembered.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
import traceback
from types import TracebackType

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from core import __version__, machine
from memsense_gui.state import paths

QUIT_AFTER_ANSWER = "MEMSENSE_GUI_QUIT_AFTER_ANSWER"
"""Set (to anything): print the first answer's top memory id and quit with 0 (the install test
runs the app offscreen to its first answer this way)."""


def _install_excepthook(window) -> None:
    """An exception escaping a slot becomes an error dialog, never a crash."""
    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        exc.traceback_text = "".join(traceback.format_exception(kind, exc, tb))  # type: ignore[attr-defined]
        traceback.print_exception(kind, exc, tb)
        window.report_error(exc)

    sys.excepthook = hook


def _preload_model(task: object = None) -> None:
    from core.recall.embedding.embedder import preload

    preload()


def parse_args(argv: list[str]) -> argparse.Namespace:
    """`memsense-gui [STORE]` (argv without the program's name)."""
    parser = argparse.ArgumentParser(
        prog="memsense-gui", description="See why a conversational memory ranked what it ranked, and tune it live.",
        epilog="Without STORE the last store opens (the demo store on the first run, built then). "
               f"{machine.HOME_ENV} moves the app's settings, presets and stores; {machine.CACHE_ENV} its cache.")
    parser.add_argument("store", nargs="?", default="", metavar="STORE",
                        help="a store folder (memsense ingest … --store DIR) or a Qdrant server URL to open")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    parser.add_argument("--install-desktop", action="store_true",
                        help="write this install's launcher (absolute Exec) and icon into ~/.local/share "
                             "($XDG_DATA_HOME), so the desktop's menu starts it, and exit")
    return parser.parse_args(argv)


def install_desktop() -> int:
    """`memsense-gui --install-desktop`: the files written, or the one line saying why not."""
    from core.errors import MemsenseError
    from memsense_gui.launcher import install_desktop as write

    try:
        written = write()
    except MemsenseError as exc:
        print(f"memsense-gui: error: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"memsense-gui: wrote {path}")
    return 0


def checked_store(location: str) -> tuple[str, str]:
    """(the store to open, "" or the one line saying why `location` is not opened)."""
    if not location or location.startswith(("http://", "https://")):
        return location, ""
    path = Path(location).expanduser()
    if not path.exists():
        return "", f"memsense-gui: error: no store at {path} (no such folder); opening the last store instead"
    if not path.is_dir():
        return "", (f"memsense-gui: error: {path} is a file, not a store folder (build one with memsense ingest "
                    "FILE --store DIR); opening the last store instead")
    return str(path.resolve()), ""


def create_window(argv: list[str] | None = None, store: str = ""):
    """The application and its main window, shown, with `store` (else the last store) opening.
    The embedding model starts loading first, a job on its own task runner, while the window is
    built."""
    from memsense_gui.workers.runner import TaskRunner

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv if argv is not None else sys.argv)
    TaskRunner("memsense-preload", app).submit("load the embedding model", _preload_model)
    from memsense_gui.window.evaluation import install_evaluation
    from memsense_gui.window.failures_actions import install_failures
    from memsense_gui.window.main_window import MainWindow
    from memsense_gui.window.run_actions import install_runs

    app.setOrganizationName(machine.ORGANIZATION)
    app.setApplicationName(machine.APPLICATION)
    app.setApplicationDisplayName("memsense")
    app.setDesktopFileName("memsense-gui")  # memsense_gui/desktop/memsense-gui.desktop: the desktop's name and icon
    home = paths.app_home()
    window = MainWindow(home, paths.settings(home))
    install_runs(window, install_evaluation(window))
    install_failures(window)
    window.restore_layout()  # every view added first: each task layout restores them all
    window.show()
    QTimer.singleShot(0, lambda: window.stores.start(store))
    return app, window


def main(argv: list[str] | None = None) -> int:
    from core.errors import MemsenseError
    from memsense_gui.compat import check_bindings

    argv = list(sys.argv if argv is None else argv)
    args = parse_args(argv[1:])  # --help and --version print and exit here
    if args.install_desktop:
        return install_desktop()
    store, problem = checked_store(args.store)
    try:
        check_bindings()
    except MemsenseError as exc:
        print(f"memsense-gui: {exc}", file=sys.stderr)
        return 2
    if problem:
        print(problem, file=sys.stderr)
    app, window = create_window(argv, store)
    if problem:
        window.statusBar().showMessage(problem.removeprefix("memsense-gui: error: ").capitalize(), 15000)
    _install_excepthook(window)
    if os.environ.get(QUIT_AFTER_ANSWER):
        window.ctx.ranking_updated.connect(lambda ranking: _quit_with_answer(app, ranking))
    return app.exec()


def _quit_with_answer(app: QApplication, ranking) -> None:
    top = ranking.results[0]["memory_id"] if ranking.results else "no result"
    print(f"memsense-gui: first answer: {top}", flush=True)
    app.exit(0)


if __name__ == "__main__":
    sys.exit(main())
