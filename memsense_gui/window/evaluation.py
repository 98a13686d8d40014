"""The Evaluation view as a dock of the window: its questions open in the inspector."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMainWindow

from memsense_gui.views.evaluation import EvaluationView


def install_evaluation(window: QMainWindow) -> EvaluationView:
    """Add the Evaluation view (with its Auto-tune tab) on the window's context."""
    view = EvaluationView.for_context(window.ctx)
    view.question_activated.connect(window.queries.open_question)
    app = QCoreApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(view.shutdown)
    window.add_view("Evaluation", view)
    return view
