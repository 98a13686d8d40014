"""A dock scrolls its view only below the view's minimum size, whatever the view's preferred
height (word-wrapped labels make a layout ask for its height for width)."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow, QTableWidget, QVBoxLayout, QWidget

from memsense_gui.views.dock import DockId, ViewDock


def _view() -> QWidget:
    view = QWidget()
    layout = QVBoxLayout(view)
    label = QLabel("a long explanation that wraps over several lines " * 12)
    label.setWordWrap(True)
    layout.addWidget(label)
    table = QTableWidget(40, 3)
    layout.addWidget(table, 1)
    return view


def test_a_dock_scrolls_only_below_its_views_minimum(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    view = _view()
    dock = ViewDock(DockId.EVALUATION, view, window)
    assert dock.objectName() == "dock-evaluation" and dock.windowTitle() == "Evaluation" and dock.id is DockId.EVALUATION
    window.setCentralWidget(dock)
    window.show()
    minimum, preferred = view.minimumSizeHint().height(), view.sizeHint().height()
    scroll = dock.widget()
    height = (minimum + preferred) // 2  # above the minimum, below what the view would like
    assert minimum < height < preferred
    window.resize(700, height + 40)
    qtbot.waitUntil(lambda: scroll.viewport().height() > minimum, timeout=2000)
    assert scroll.verticalScrollBar().maximum() == 0 and view.height() == scroll.viewport().height()

    window.resize(700, minimum // 2)  # below the minimum: the view keeps it and scrolls
    qtbot.waitUntil(lambda: scroll.verticalScrollBar().maximum() > 0, timeout=2000)
    assert view.height() >= minimum
