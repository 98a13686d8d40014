"""Every table model answers a painted cell's roles in one `multiData` call, with what `data`
answers role by role: the same pixels, and `data` is not called for them."""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, Qt
from PySide6.QtGui import QColor

from memsense_gui.models.table import RowsModel, bold_font
from memsense_gui.views.tables import make_table


class Rows(RowsModel):
    HEADERS = ("#", "text", "score")
    NUMERIC = frozenset({2})
    asked: list[int] = []

    def display(self, row, col):
        return (str(row + 1), f"row {row} of the table", f"{row / 7:.3f}")[col]

    def raw(self, row, col):
        return row / 7 if col == 2 else self.display(row, col)

    def foreground(self, row, col):
        return QColor("#b00020") if row % 3 == 0 and col == 2 else None

    def background(self, row, col):
        return QColor("#e0f0ff") if row == 4 else None

    def font(self, row, col):
        return bold_font() if row == 1 else None

    def data(self, index, role=0):
        self.asked.append(role)
        return super().data(index, role)


class RoleByRole(Rows):
    def multiData(self, index, roles):  # noqa: N802 - Qt's own: one data() call per role
        QAbstractTableModel.multiData(self, index, roles)


def _painted(qtbot, model_type, sortable):
    model = model_type()
    model.set_rows(range(9))
    view = make_table(model, sortable=sortable)
    qtbot.addWidget(view)
    view.resize(360, 260)
    view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # neither view draws a focus or an active selection
    view.show()
    model.asked.clear()
    image = view.viewport().grab().toImage()
    return image, list(model.asked)


def test_cells_paint_the_same_from_one_call_per_cell_as_from_one_call_per_role(qtbot):
    for sortable in (False, True):  # a sorting proxy forwards the call
        fast, asked_fast = _painted(qtbot, Rows, sortable)
        slow, asked_slow = _painted(qtbot, RoleByRole, sortable)
        assert fast == slow
        assert len(asked_slow) >= 27 * 6 and len(asked_fast) < len(asked_slow) / 5
