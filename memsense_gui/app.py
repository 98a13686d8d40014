"""`memsense-gui`: the desktop app's entry point.

First run with no store: builds the demo store (with a progress dialog) into the per-user
data dir and opens it. Later runs reopen the last store at once; the embedding model loads in
the background. Window layout, appearance and last query are remembered.
"""
from __future__ import annotations

import sys
import traceback
from types import TracebackType

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from memsense_gui.state import paths


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
    from core.recall.embed import preload

    preload()


def create_window(argv: list[str] | None = None):
    """The application and its main window, shown, with the last store opening. The embedding
    model starts loading first, a job on its own task runner, while the window is built."""
    from memsense_gui.workers.runner import TaskRunner

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv if argv is not None else sys.argv)
    TaskRunner("memsense-preload", app).submit("load the embedding model", _preload_model)
    from memsense_gui.window.evaluation import install_evaluation
    from memsense_gui.window.main_window import MainWindow

    app.setOrganizationName(paths.ORGANIZATION)
    app.setApplicationName(paths.APPLICATION)
    app.setApplicationDisplayName("memsense")
    home = paths.app_home()
    window = MainWindow(home, paths.settings(home))
    window.restore_layout()
    install_evaluation(window)
    window.show()
    QTimer.singleShot(0, window.stores.start)
    return app, window


def main(argv: list[str] | None = None) -> int:
    from core.errors import MemsenseError
    from memsense_gui.compat import check_bindings

    try:
        check_bindings()
    except MemsenseError as exc:
        print(f"memsense-gui: {exc}", file=sys.stderr)
        return 2
    app, window = create_window(argv)
    _install_excepthook(window)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
