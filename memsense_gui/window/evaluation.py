"""The Evaluation view as a dock of the window: its questions open in the inspector."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer
from typing import Protocol

from PySide6.QtWidgets import QDockWidget

from memsense_gui.state.context import AppContext
from memsense_gui.views.dock import DockId, ViewDock
from memsense_gui.views.evaluation import EvaluationView
from memsense_gui.window.parts import QuestionOpener, SettingsApplier, Shell


class EvaluationUi(Shell, Protocol):
    @property
    def ctx(self) -> AppContext: ...
    @property
    def queries(self) -> QuestionOpener: ...
    @property
    def applying(self) -> SettingsApplier: ...

    def height(self) -> int: ...

    def resizeDocks(self, docks: list[QDockWidget], sizes: list[int], orientation: Qt.Orientation) -> None: ...  # noqa: N802


def install_evaluation(window: EvaluationUi) -> EvaluationView:
    """Add the Evaluation view (with its Auto-tune tab) on the window's context."""
    view = EvaluationView.for_context(window.ctx)
    view.question_activated.connect(window.queries.open_question)
    if view.autotune is not None:  # the best trial is applied with its diff, in one undoable step
        view.autotune.apply_requested.connect(lambda cfg, what: window.applying.offer(cfg, what))
    app = QCoreApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(view.shutdown)
    dock = window.add_view(DockId.EVALUATION, view)

    def later(*_args) -> None:  # once the layout has taken the view's new minimum
        QTimer.singleShot(ROOM_AFTER_MS, lambda: _make_room(window, dock))

    def shown(visible: bool) -> None:
        if visible:
            later()

    dock.visibilityChanged.connect(shown)
    view.evaluation_finished.connect(later)
    return view


ROOM_AFTER_MS = 1
"""Room is made on a timer, not a posted call: the event loop turns (and paints the new results)
first; a posted call ran in the same pass as the results' arrival, one freeze of both (0.2-0.3 s
after Evaluate on LoCoMo dev, measured by tools/bench_stalls.py)."""
LAYOUT_DEPTH = 8
ROOM = 0.75
"""At most this share of the window's height goes to the Evaluation dock when it is shown."""


def _make_room(window: EvaluationUi, dock: ViewDock) -> None:
    """Shown docked and shorter than its view needs: the dock area grows (up to `ROOM` of the
    window), so every preset's row and the bars fit without scrolling where the window allows."""
    for _level in range(LAYOUT_DEPTH):  # a new minimum climbs one layout level per posted request
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    need = dock.view.minimumSizeHint().height() + dock.widget().y() + 4
    if not dock.isVisible() or dock.isFloating() or dock.height() >= need:
        return
    window.resizeDocks([dock], [min(need, int(window.height() * ROOM))], Qt.Orientation.Vertical)
