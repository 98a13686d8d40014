"""Every table model answers a painted cell's roles in one `multiData` call, with what `data`
answers role by role: the same pixels, and `data` is not called for them."""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, Qt

from memsense_gui.views.tables import make_table
from tests.gui.fixtures import CellRows


class Rows(CellRows):
    asked: list[int] = []

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
