"""A dock that can shrink: its view scrolls when the dock is smaller than the view's minimum.

Without it, the largest minimum height among the docks sets the window's minimum height (the
"Why not?" panel alone kept the window at 796 px); with it, a small screen squeezes the docks
and the views scroll, nothing is laid over anything else.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget


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
    """A dock holding one view (`dock.view`) inside a frameless, resizable scroll area."""

    def __init__(self, title: str, view: QWidget, parent: QWidget | None = None):
        super().__init__(title, parent)
        self.view = view
        scroll = QScrollArea()
        scroll.setObjectName(f"scroll-{title}")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(_Holder(view))
        self.setWidget(scroll)
