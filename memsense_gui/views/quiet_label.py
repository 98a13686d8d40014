"""A one-line label whose new text never re-lays out the window.

`QLabel.setText` asks its parent's layout to lay out again (`updateGeometry`), even with an
`Ignored` size policy; the request climbs to the main window, whose layout then repaints
everything right of the docks: on a slider tick that changes the results caption, that was
16 full repaints of the central area in 36 ticks. Here the label is the only child of a
widget with no layout, which takes that request and ends it: the label keeps the holder's
whole rectangle, and only its own pixels are repainted.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class QuietLabel(QWidget):
    """A label one line high, as wide as its layout gives it, with QLabel's text and tooltip."""

    def __init__(self, text: str = "", rich: bool = False, parent: QWidget | None = None):
        super().__init__(parent)
        self.label = QLabel(text, self)
        self.label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def text(self) -> str:
        return self.label.text()

    def setText(self, text: str) -> None:  # noqa: N802 - QLabel's name
        self.label.setText(text)

    def setToolTip(self, text: str) -> None:  # noqa: N802 - QLabel's name
        self.label.setToolTip(text)

    def toolTip(self) -> str:  # noqa: N802 - QLabel's name
        return self.label.toolTip()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(0, self.label.sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return self.sizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        self.label.setGeometry(self.rect())
        super().resizeEvent(event)
