"""A nested dict (a result record with its explain) as a two-column tree: field, value."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from core.rank.glossary import Term
from memsense_gui.models.table import DISPLAY, RAW_ROLE

TermOf = Callable[[Sequence[str]], "Term | None"]


class _Node:
    __slots__ = ("key", "value", "parent", "children", "row")

    def __init__(self, key: str, value: Any, parent: "_Node | None", row: int):
        self.key, self.parent, self.row = key, parent, row
        self.children: list[_Node] = []
        if isinstance(value, dict):
            self.value = None
            self.children = [_Node(str(k), v, self, i) for i, (k, v) in enumerate(value.items())]
        elif isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in value):
            self.value = None
            self.children = [_Node(f"[{i}]", v, self, i) for i, v in enumerate(value)]
        else:
            self.value = value


class DictTreeModel(QAbstractItemModel):
    """A nested dict (a result record with its explain) as a two-column tree: field, value."""

    KEY, VALUE = range(2)
    HEADERS = ("Field", "Value")

    def __init__(self, parent=None, term_of: TermOf | None = None):
        """`term_of(path)`: the glossary term a field holds, by its path of keys from the root;
        such a field shows the term's label, with its formula as the tooltip."""
        super().__init__(parent)
        self._root = _Node("", {}, None, 0)
        self._term_of = term_of

    def set_data(self, data: dict[str, Any] | None) -> None:
        self.beginResetModel()
        self._root = _Node("", data or {}, None, 0)
        self.endResetModel()

    def _node(self, index: QModelIndex | QPersistentModelIndex) -> _Node:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        return self.createIndex(row, column, self._node(parent).children[row])

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer().parent
        if node is None or node is self._root:
            return QModelIndex()
        return self.createIndex(node.row, 0, node)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == DISPLAY and 0 <= section < 2:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = DISPLAY) -> Any:
        if not index.isValid():
            return None
        node: _Node = index.internalPointer()
        if role == DISPLAY:
            if index.column() == self.KEY:
                term = self._term(node)
                return term.label if term is not None else node.key
            return "" if node.children else _value_text(node.value)
        if role == RAW_ROLE:
            return node.key if index.column() == self.KEY else node.value
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == self.KEY:
                term = self._term(node)
                return term.tooltip() if term is not None else None
            if node.children:
                return None
            return NULL_TIP if node.value is None else str(node.value)
        return None

    def _term(self, node: _Node) -> Term | None:
        if self._term_of is None:
            return None
        path = []
        while node.parent is not None:
            path.append(node.key)
            node = node.parent
        return self._term_of(path[::-1])

    def path_index(self, *keys: str) -> QModelIndex:
        """The index of a nested field by its keys (not labels), e.g. path_index("explain", "mmr", "mmr_score")."""
        node, index = self._root, QModelIndex()
        for key in keys:
            match = next((c for c in node.children if c.key == key), None)
            if match is None:
                return QModelIndex()
            node, index = match, self.index(match.row, 0, index)
        return index


NULL_TIP = "null: does not apply here"
"""The tooltip of a value shown as "—": the record holds null there."""


def _value_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) if value else "[]"
    if value is None:
        return "—"  # a field that does not apply here: null in the record (`NULL_TIP`, and `--json`)
    text = str(value)
    return text if len(text) <= 300 else text[:299] + "…"
