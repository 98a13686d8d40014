"""Both appearances draw every check box and radio button with an edge that reads against the
window (a walkthrough found an unchecked box at 1.1:1 in the dark one)."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QCheckBox, QRadioButton, QStyle, QStyleOptionButton

from memsense_gui import theme

NON_TEXT_CONTRAST = 3.0
"""WCAG 2.1's least contrast of a control's edge against what is beside it (criterion 1.4.11)."""


def luminance(c: QColor) -> float:
    def lin(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.fixture
def light_after(qtbot):
    yield
    theme.apply(QApplication.instance(), False)


@pytest.mark.parametrize("dark", [False, True])
@pytest.mark.parametrize("kind, element", [(QCheckBox, QStyle.SubElement.SE_CheckBoxIndicator),
                                           (QRadioButton, QStyle.SubElement.SE_RadioButtonIndicator)])
def test_an_unchecked_mark_has_an_edge_that_reads_against_the_window(qtbot, light_after, dark, kind, element):
    current = theme.apply(QApplication.instance(), dark)
    box = kind("one row per session")
    qtbot.addWidget(box)
    box.resize(box.sizeHint())
    option = QStyleOptionButton()
    box.initStyleOption(option)
    rect = box.style().subElementRect(element, option, box)
    image = box.grab().toImage()
    window = QColor(current.window)
    best = max(contrast(image.pixelColor(x, y), window)
               for x in range(rect.left(), rect.right() + 1) for y in range(rect.top(), rect.bottom() + 1))
    assert best >= NON_TEXT_CONTRAST, (dark, kind.__name__, round(best, 2))


@pytest.mark.parametrize("dark", [False, True])
def test_tables_paint_their_cells_as_the_app_style_would_without_its_python_override(qtbot, light_after, dark):
    from memsense_gui.views.tables import make_table
    from tests.gui.fixtures import CellRows

    theme.apply(QApplication.instance(), dark)
    model = CellRows()
    model.set_rows(range(12))
    view = make_table(model)
    qtbot.addWidget(view)
    view.resize(420, 300)
    view.show()
    view.selectRow(2)
    assert view.style().name().lower() == "fusion" and not isinstance(view.style(), theme.OutlinedStyle)
    cells = view.viewport().grab().toImage()
    view.setStyle(QApplication.style())  # the app's OutlinedStyle
    assert isinstance(view.style(), theme.OutlinedStyle)
    assert view.viewport().grab().toImage() == cells


def test_a_tables_style_goes_with_it_and_never_with_another_table(qtbot):
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from memsense_gui.models.table import RowsModel
    from memsense_gui.views.tables import make_table

    for _ in range(2):  # the second window's tables still paint: no style was shared with the first's
        window = QWidget()
        layout = QVBoxLayout(window)
        views = [make_table(RowsModel()) for _ in range(3)]
        for view in views:
            layout.addWidget(view)
        window.show()
        assert len({id(v.style()) for v in views}) == 3
        assert all(v.viewport().grab().width() > 0 for v in views)
        window.deleteLater()
        qtbot.wait(10)
