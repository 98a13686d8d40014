"""Table views for the panels: compact, row-selecting, sorted on raw values; selection by memory id."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QHeaderView, QTableView, QVBoxLayout, QWidget

from memsense_gui.models.table import ID_ROLE, RAW_ROLE


def make_table(model, *, sortable: bool = False, stretch: int | None = None) -> QTableView:
    """A row-selecting, compact table view; sortable tables sort on the raw-value role."""
    view = QTableView()
    if sortable:
        proxy = QSortFilterProxyModel(view)
        proxy.setSourceModel(model)
        proxy.setSortRole(RAW_ROLE)
        view.setModel(proxy)
        view.setSortingEnabled(True)
        view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    else:
        view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setHighlightSections(False)
    if stretch is not None:
        header.setStretchLastSection(False)
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    else:
        header.setStretchLastSection(True)
    return view


def sorting_table(model, stretch: int | None = None) -> tuple[QTableView, QSortFilterProxyModel]:
    """A sortable `make_table` of `model` and the proxy it sorts through (to map its rows back)."""
    view = make_table(model, sortable=True, stretch=stretch)
    proxy = view.model()
    assert isinstance(proxy, QSortFilterProxyModel)
    return view, proxy


def with_buttons(table: QWidget, buttons: tuple[QWidget, ...], above: QWidget | None = None) -> QWidget:
    """`table` (with `above` over it) and a row of `buttons` right-aligned beneath it, as one widget."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    if above is not None:
        column.addWidget(above)
    column.addWidget(table, 1)
    row = QHBoxLayout()
    row.addStretch(1)
    for button in buttons:
        row.addWidget(button)
    column.addLayout(row)
    return box


def selected_id(view: QTableView) -> str | None:
    rows = view.selectionModel().selectedRows() if view.selectionModel() else []
    return rows[0].data(ID_ROLE) if rows else None


def select_id(view: QTableView, memory_id: str | None) -> bool:
    """Select the row holding `memory_id` (no signal loops: callers block as needed)."""
    model = view.model()
    for r in range(model.rowCount()):
        index = model.index(r, 0)
        if index.data(ID_ROLE) == memory_id:
            view.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                         | QItemSelectionModel.SelectionFlag.Rows)
            view.scrollTo(index)
            return True
    view.clearSelection()
    return False


def fit_columns(view: QTableView, widths: dict[int, int]) -> None:
    for col, chars in widths.items():
        view.setColumnWidth(col, view.fontMetrics().horizontalAdvance("0") * chars + 16)


class Panel(QWidget):
    """A panel over one or more tables: emits `chunk_selected(memory_id)` when a row is picked."""

    chunk_selected = Signal(str)

    def _watch(self, view: QTableView) -> None:
        view.selectionModel().selectionChanged.connect(lambda *_: self._emit_selected(view))

    def _emit_selected(self, view: QTableView) -> None:
        mid = selected_id(view)
        if mid:
            self.chunk_selected.emit(mid)
