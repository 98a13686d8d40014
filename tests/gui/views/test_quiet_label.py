"""A caption that changes on every slider tick must not lay out (and repaint) the window again."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from memsense_gui.views.quiet_label import QuietLabel


class _LayoutRequests(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _requests_for(qtbot, label: QWidget, window: QWidget) -> int:
    """Layout requests the label's window receives while its text changes ten times."""
    qtbot.addWidget(window)
    QVBoxLayout(window).addWidget(label)
    window.resize(400, 100)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    seen = _LayoutRequests()
    window.installEventFilter(seen)
    for i in range(10):
        label.setText(f"<b>{i}</b> results for <b>a query</b> · λ 0.{i}")
        QApplication.processEvents()
    return seen.count


def test_a_new_text_reaches_no_layout_above_the_quiet_label(qtbot):
    windows = QWidget(), QWidget()
    assert _requests_for(qtbot, QLabel(), windows[0]) > 0  # what QLabel does: the check can fail
    quiet = QuietLabel("", rich=True)
    assert _requests_for(qtbot, quiet, windows[1]) == 0
    assert quiet.text().startswith("<b>9</b>") and quiet.label.geometry() == quiet.rect()
    quiet.setToolTip("the whole caption")
    assert quiet.toolTip() == "the whole caption" and quiet.sizeHint().height() == quiet.label.sizeHint().height()


def test_the_results_caption_is_quiet(make_window):
    assert isinstance(make_window().results.caption, QuietLabel)
