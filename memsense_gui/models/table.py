"""The base of every table model: column constants, role dispatch, and the two custom roles.

Each model shows text only in DisplayRole and gives the raw value (number, id, None) in
`RAW_ROLE` for sorting and plotting; `ID_ROLE` is the row's memory_id (Qt for Python's
address-book example; vorta's archive table model).
"""
from __future__ import annotations

from typing import Any, Generic, Sequence, TypeVar, cast

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QModelRoleData, QModelRoleDataSpan, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from core.rank.glossary import label, tooltip

RAW_ROLE = Qt.ItemDataRole.UserRole + 1
ID_ROLE = Qt.ItemDataRole.UserRole + 2
DISPLAY = Qt.ItemDataRole.DisplayRole
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
RIGHT_ALIGNED = int(_RIGHT.value)
_ROLE_METHODS: dict[int, str] = {
    int(Qt.ItemDataRole.DisplayRole.value): "display",
    RAW_ROLE: "raw",
    ID_ROLE: "memory_id",
    int(Qt.ItemDataRole.TextAlignmentRole.value): "alignment",
    int(Qt.ItemDataRole.ToolTipRole.value): "tooltip",
    int(Qt.ItemDataRole.ForegroundRole.value): "foreground",
    int(Qt.ItemDataRole.BackgroundRole.value): "background",
    int(Qt.ItemDataRole.FontRole.value): "font",
}


GLOSSARY_HINT = "F1: glossary"
"""The last line of every column header's tooltip: F1 opens the glossary at the column's term."""


def header_tip(tip: str | None) -> str:
    """A column header's tooltip: its own text, if any, then the glossary hint."""
    return f"{tip}\n{GLOSSARY_HINT}" if tip else GLOSSARY_HINT


T = TypeVar("T")
R = TypeVar("R")


def on_screen(value: T | None) -> T:
    """What a model shows (a ranking, a comparison): rows exist, and are read, only while it has one."""
    if value is None:
        raise LookupError("the table shows nothing: it has no row to read")
    return value


def term_headers(names: tuple[str, ...], terms: dict[int, str]) -> tuple[str, ...]:
    """Column headers: the glossary label of each column that shows a record term
    (`core.rank.glossary`), `names[c]` for the others."""
    return tuple(label(terms[c]) if c in terms else name for c, name in enumerate(names))


def term_tips(terms: dict[int, str]) -> dict[int, str]:
    """Header tooltips of the columns that show a record term: the term's formula and SPEC section."""
    return {c: tooltip(key) for c, key in terms.items()}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class TableModel(QAbstractTableModel):
    """Shared plumbing: headers, row/column counts, role dispatch."""

    HEADERS: tuple[str, ...] = ()
    HEADER_TIPS: dict[int, str] = {}
    NUMERIC: frozenset[int] = frozenset()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._n = 0

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._n

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.HEADERS):
            return None
        if role == DISPLAY:
            return self.HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return header_tip(self.HEADER_TIPS.get(section))
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = DISPLAY) -> Any:
        method = _ROLE_METHODS.get(role)  # views ask for a dozen roles per cell: answer fast
        cell = self._cell(index)
        if method is None or cell is None:
            return None
        return self._answer(method, *cell)

    def multiData(self, index: QModelIndex | QPersistentModelIndex,  # noqa: N802 - Qt override
                  roles: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role a view asks of one cell in one call: Qt 6's item delegate asks seven per
        painted cell through this, and each went through Python as a `data` call of its own."""
        cell = self._cell(index)
        # a span is a sequence (len and indexing) that PySide's type stubs do not declare
        for asked in (roles,) if isinstance(roles, QModelRoleData) else cast(Sequence[QModelRoleData], roles):
            method = _ROLE_METHODS.get(asked.role())
            value = self._answer(method, *cell) if method is not None and cell is not None else None
            if value is None:
                asked.clearData()  # the delegate reuses its span from cell to cell: no role keeps the last cell's
            else:
                asked.setData(value)

    def _cell(self, index: QModelIndex | QPersistentModelIndex) -> tuple[int, int] | None:
        """(row, column) of a valid index inside the table, None for any other."""
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        return (row, col) if 0 <= row < self._n and 0 <= col < len(self.HEADERS) else None

    def _answer(self, method: str, row: int, col: int) -> Any:
        if method == "alignment":  # numbers right-aligned, so their decimals line up
            return RIGHT_ALIGNED if col in self.NUMERIC or _is_number(self.raw(row, col)) else None
        if method == "memory_id":
            return self.memory_id(row)
        return getattr(self, method)(row, col)

    def display(self, row: int, col: int) -> str | None:
        raise NotImplementedError

    def raw(self, row: int, col: int) -> Any:
        return self.display(row, col)

    def memory_id(self, row: int) -> str | None:
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        return None

    def foreground(self, row: int, col: int) -> QColor | None:
        return None

    def background(self, row: int, col: int) -> QColor | None:
        return None

    def font(self, row: int, col: int) -> QFont | None:
        return None

    def refresh(self) -> None:
        """Repaint every cell (after a theme change) without losing the selection."""
        if self._n:
            self.dataChanged.emit(self.index(0, 0), self.index(self._n - 1, len(self.HEADERS) - 1))

    def _refresh_column(self, col: int) -> None:
        if self._n:
            self.dataChanged.emit(self.index(0, col), self.index(self._n - 1, col))

    def row_of(self, memory_id: str) -> int | None:
        for r in range(self._n):
            if self.memory_id(r) == memory_id:
                return r
        return None


class RowsModel(TableModel, Generic[R]):
    """A table of one object a row (`rows`); `set_rows` replaces them all, a reset the views follow."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: tuple[R, ...] = ()

    def set_rows(self, rows: Sequence[R]) -> None:
        self.beginResetModel()
        self.rows = tuple(rows)
        self._n = len(self.rows)
        self.endResetModel()


_FONTS: dict[str, QFont] = {}


def bold_font() -> QFont:
    if "bold" not in _FONTS:
        _FONTS["bold"] = f = QFont()
        f.setBold(True)
    return _FONTS["bold"]


def italic_font() -> QFont:
    if "italic" not in _FONTS:
        _FONTS["italic"] = f = QFont()
        f.setItalic(True)
    return _FONTS["italic"]
