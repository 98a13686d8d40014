"""A dock that can shrink: its view scrolls when the dock is smaller than the view's minimum.

Without it, the largest minimum height among the docks sets the window's minimum height (the
"Why not?" panel alone kept the window at 796 px); with it, a small screen squeezes the docks
and the views scroll, nothing is laid over anything else.
"""
from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import QEvent, QSize
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget


class DockId(StrEnum):
    """Every dock of the window, found by this id (its object name is `dock-<id>`, which the
    saved window layout refers to), never by its title, which is only what the user reads."""

    TUNING = "tuning"
    CASES = "cases"
    CHUNK = "chunk"
    EXPLAIN = "explain"
    TURN_SUPPORT = "turn-support"
    WHY_NOT = "why-not"
    ROUTE_RANKS = "route-ranks"
    CANDIDATE_POOL = "candidate-pool"
    MMR_TRACE = "mmr-trace"
    COMPARE = "compare"
    EVALUATION = "evaluation"
    PRODUCTION = "production"
    DIAGNOSE = "diagnose"
    FIX = "fix"
    IMPACT = "impact"
    HISTORY = "history"

    @property
    def label(self) -> str:
        return TITLES[self]

    @property
    def object_name(self) -> str:
        return f"dock-{self.value}"


TITLES: dict[DockId, str] = {
    DockId.TUNING: "Tuning", DockId.CASES: "Cases", DockId.CHUNK: "Chunk", DockId.EXPLAIN: "Explain",
    DockId.TURN_SUPPORT: "Turn support", DockId.WHY_NOT: "Why not?", DockId.ROUTE_RANKS: "Route ranks",
    DockId.CANDIDATE_POOL: "Candidate pool", DockId.MMR_TRACE: "MMR trace", DockId.COMPARE: "Compare",
    DockId.EVALUATION: "Evaluation", DockId.PRODUCTION: "Production", DockId.DIAGNOSE: "Diagnose",
    DockId.FIX: "Find a fix", DockId.IMPACT: "Impact", DockId.HISTORY: "Runs",
}
"""The title each dock shows."""


class _Holder(QWidget):
    """Keeps the view at the scroll area's size, down to the view's minimum size. A scroll area
    sizes a widget whose layout wraps words by its height for width (its preferred height), so
    a view with a wrapped label would scroll long before it had to; the holder has no layout."""

    def __init__(self, view: QWidget):
        super().__init__()
        self.view = view
        view.setParent(self)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return self.view.minimumSizeHint()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return self.view.sizeHint()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.view.setGeometry(self.rect())

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # the view's minimum may have changed
            self.updateGeometry()
        return super().event(event)


class ViewDock(QDockWidget):
    """A dock holding one view (`dock.view`) inside a frameless, resizable scroll area; `dock.id`
    names it."""

    def __init__(self, which: DockId, view: QWidget, parent: QWidget | None = None):
        super().__init__(which.label, parent)
        self.id = which
        self.setObjectName(which.object_name)
        self.view = view
        scroll = QScrollArea()
        scroll.setObjectName(f"scroll-{which.label}")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(_Holder(view))
        self.setWidget(scroll)
