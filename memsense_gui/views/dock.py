"""A dock that can shrink: its view scrolls when the dock is smaller than the view's minimum.

Without it, the largest minimum height among the docks sets the window's minimum height (the
"Why not?" panel alone kept the window at 796 px); with it, a small screen squeezes the docks
and the views scroll, nothing is laid over anything else.
"""
from __future__ import annotations

from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget


class ViewDock(QDockWidget):
    """A dock holding one view (`dock.view`) inside a frameless, resizable scroll area."""

    def __init__(self, title: str, view: QWidget, parent: QWidget | None = None):
        super().__init__(title, parent)
        self.view = view
        scroll = QScrollArea()
        scroll.setObjectName(f"scroll-{title}")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(view)
        self.setWidget(scroll)
