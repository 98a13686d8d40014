"""The focused chunk's score as a tree of its formula (`core.rank.formula`): term, value, formula."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

from core.rank.formula import FormulaNode
from core.rank.glossary import TERMS
from memsense_gui.models.format import fmt
from memsense_gui.models.table import RAW_ROLE

KEY_ROLE = Qt.ItemDataRole.UserRole + 3
"""The glossary key (or route name) of the record field a node's value is read from."""
ADDS_ROLE = Qt.ItemDataRole.UserRole + 4
"""True on a node whose children sum to its value (`FormulaNode.adds`)."""


class FormulaTreeModel(QStandardItemModel):
    """Term · Value · Formula, nested as the formula nests; values shown as the tables show them
    (`fmt`), the number itself in `RAW_ROLE` and the tooltip."""

    TERM, VALUE, FORMULA = range(3)
    HEADERS = ("Term", "Value", "Formula")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHorizontalHeaderLabels(list(self.HEADERS))
        self.root: FormulaNode | None = None

    def set_tree(self, root: FormulaNode | None) -> None:
        self.removeRows(0, self.rowCount())
        self.root = root
        if root is not None:
            self.appendRow(_row(root))


def _row(node: FormulaNode) -> list[QStandardItem]:
    term = QStandardItem(node.label)
    value = QStandardItem(fmt(node.value))
    formula = QStandardItem(node.formula)
    value.setData(node.value, RAW_ROLE)
    value.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    term.setData(node.key, KEY_ROLE)
    term.setData(node.adds, ADDS_ROLE)
    glossary = TERMS.get(node.key or "")
    term.setToolTip(glossary.tooltip() if glossary is not None else node.formula)
    value.setToolTip("" if node.value is None else f"{node.value!r}" + (" = the sum of the terms below" if node.adds else ""))
    formula.setToolTip(node.formula)
    for item in (term, value, formula):
        item.setEditable(False)
    for child in node.children:
        term.appendRow(_row(child))
    return [term, value, formula]
