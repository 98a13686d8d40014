"""Table views for the panels: compact, row-selecting, sorted on raw values; selection by memory id.

Every table made here is readable in a small pane: a cell cut short shows its whole text as a
tooltip, a click never scrolls the table sideways, and the header's context menu chooses the
columns shown. `set_columns` gives a table its compact default (key columns first, some hidden);
`keep_columns`/`save_columns` keep each named table's columns with `QHeaderView.saveState`.
"""
from __future__ import annotations

from typing import Iterable

from PySide6.QtCore import (
    QByteArray, QEvent, QItemSelectionModel, QModelIndex, QModelRoleData, QModelRoleDataSpan, QObject, QPersistentModelIndex,
    QSettings, QSortFilterProxyModel, Qt, Signal,
)
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView, QHBoxLayout, QHeaderView, QMenu, QTableView, QToolTip, QVBoxLayout, QWidget,
)

from memsense_gui import theme
from memsense_gui.models.table import ID_ROLE, RAW_ROLE

CELL_PADDING = 8
"""Pixels of a cell's width that are not text (the style's margins): a wider text is cut."""
COLUMNS_KEY = "columns/{}"
"""The settings key of a named table's columns (its header's saved state)."""


class RowTable(QTableView):
    """A row-selecting table: a cell cut short shows its whole text as a tooltip (unless the model
    gives one), and moving to a row scrolls up or down only, never sideways (a long cell would
    otherwise push the columns before it, e.g. B − A, out of view)."""

    def scrollTo(self, index: QModelIndex | QPersistentModelIndex, hint=QAbstractItemView.ScrollHint.EnsureVisible) -> None:  # noqa: N802
        across = self.horizontalScrollBar().value()
        super().scrollTo(index, hint)
        self.horizontalScrollBar().setValue(across)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ToolTip:
            index = self.indexAt(event.pos())  # type: ignore[attr-defined]
            text = cut_text(self, index)
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport(), self.visualRect(index))  # type: ignore[attr-defined]
                return True
        return super().viewportEvent(event)


def cut_text(view: QTableView, index: QModelIndex | QPersistentModelIndex) -> str | None:
    """The whole text of the cell at `index` when the view cuts it short and the model has no tooltip."""
    if not index.isValid() or index.data(Qt.ItemDataRole.ToolTipRole):
        return None
    text = index.data(Qt.ItemDataRole.DisplayRole)
    if not isinstance(text, str) or not text:
        return None
    room = view.visualRect(index).width() - CELL_PADDING
    return text if view.fontMetrics().horizontalAdvance(text) > room else None


class SortingProxy(QSortFilterProxyModel):
    """Sorts on the raw-value role, and hands a cell's roles to the table model in one call
    (`TableModel.multiData`): Qt's sort proxy asks the model role by role."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(RAW_ROLE)

    def multiData(self, index: QModelIndex | QPersistentModelIndex,  # noqa: N802 - Qt override
                  roles: QModelRoleDataSpan | QModelRoleData) -> None:
        self.sourceModel().multiData(self.mapToSource(index), roles)


def make_table(model, *, sortable: bool = False, stretch: int | None = None) -> QTableView:
    """A row-selecting, compact table view (`RowTable`) with a column chooser on its header;
    sortable tables sort on the raw-value role."""
    view = RowTable()
    view.setStyle(theme.cell_style())  # cells never reach a Python style override
    if sortable:
        proxy = SortingProxy(view)
        proxy.setSourceModel(model)
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
    header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    header.customContextMenuRequested.connect(lambda pos: column_menu(view).exec(header.mapToGlobal(pos)))
    return view


def column_menu(view: QTableView) -> QMenu:
    """The header's context menu: every column, checked when shown; the last shown one stays."""
    header, model = view.horizontalHeader(), view.model()
    menu = QMenu(view)
    menu.setObjectName("column-chooser")
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    for visual in range(header.count()):
        column = header.logicalIndex(visual)
        name = str(model.headerData(column, Qt.Orientation.Horizontal) or "#")
        action = QAction(name, menu)
        action.setCheckable(True)
        action.setChecked(column in shown)
        action.setEnabled(shown != [column])
        action.toggled.connect(lambda on, c=column: header.setSectionHidden(c, not on))
        menu.addAction(action)
    return menu


def set_columns(view: QTableView, first: Iterable[int] = (), hidden: Iterable[int] = ()) -> None:
    """A table's compact default: the columns `first` leftmost in that order (its key columns, in
    view without scrolling), those `hidden` shown only when chosen from the header's menu."""
    header = view.horizontalHeader()
    for place, column in enumerate(first):
        header.moveSection(header.visualIndex(column), place)
    for column in hidden:
        header.setSectionHidden(column, True)


def _named_tables(root: QWidget) -> list[QTableView]:
    return [t for t in root.findChildren(QTableView) if t.objectName()]


def keep_columns(root: QWidget, settings: QSettings) -> None:
    """Each named table under `root` gets back the columns the user chose (order, widths, hidden)."""
    for table in _named_tables(root):
        state = settings.value(COLUMNS_KEY.format(table.objectName()))
        if isinstance(state, QByteArray):
            header = table.horizontalHeader()
            if header.count() and state_fits(header, state):
                header.restoreState(state)


def state_fits(header: QHeaderView, state: QByteArray) -> bool:
    """`state` is of a header with as many columns (a model with other columns would be garbled)."""
    probe = QHeaderView(header.orientation())
    probe.setModel(header.model())
    return probe.restoreState(state) and probe.count() == header.count()


def save_columns(root: QWidget, settings: QSettings) -> None:
    """Write each named table's columns under its own key (`COLUMNS_KEY`)."""
    for table in _named_tables(root):
        if table.horizontalHeader().count():
            settings.setValue(COLUMNS_KEY.format(table.objectName()), table.horizontalHeader().saveState())


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
