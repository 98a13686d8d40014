"""Help > Glossary (F1): every term the app shows, with its formula and SPEC section.

The rows are `core.rank.glossary.SECTIONS`, the one place the terms are defined (the column
labels and header tooltips of every table come from there too). F1 on a table opens it at the
term of the column under the mouse or of the focused cell; the filter box narrows the list.
"""
from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel, Qt, QTimer
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QLineEdit, QTableView, QVBoxLayout, QWidget,
)

from core.rank.glossary import SECTIONS, Term, find

COLUMNS = ("Term", "Where", "Meaning and formula", "SPEC", "Unit", "Key")
TERM, WHERE, FORMULA, SPEC, UNIT, KEY = range(len(COLUMNS))


class GlossaryDialog(QDialog):
    """The terms, filterable; `show_term(name)` selects the term a header names."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("glossary-dialog")
        self.setWindowTitle("Glossary")
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        for where, terms in SECTIONS:
            for term in terms:
                self.model.appendRow([self._item(text, term) for text in
                                      (term.label, where, term.formula, term.section, term.unit, term.key)])
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter = QLineEdit()
        self.filter.setObjectName("glossary-filter")
        self.filter.setPlaceholderText("Filter terms, formulas, sections…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.view = self._table()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.note)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        self.resize(1000, 560)

    @staticmethod
    def _item(text: str, term: Term) -> QStandardItem:
        item = QStandardItem(text)
        item.setEditable(False)
        item.setToolTip(term.tooltip())
        return item

    def _table(self) -> QTableView:
        view = QTableView()
        view.setObjectName("glossary-table")
        view.setModel(self.proxy)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.verticalHeader().setVisible(False)
        view.setWordWrap(True)
        view.setAlternatingRowColors(True)
        header = view.horizontalHeader()
        for col in (TERM, WHERE, SPEC):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(FORMULA, QHeaderView.ResizeMode.Stretch)
        digit = view.fontMetrics().horizontalAdvance("0")
        for col, chars in ((UNIT, 14), (KEY, 18)):  # long keys and units wrap
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            view.setColumnWidth(col, digit * chars)
        header.sectionResized.connect(lambda *_: view.resizeRowsToContents())  # rows as high as their wrapped text
        return view

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        QTimer.singleShot(0, self.view.resizeRowsToContents)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self.view.resizeRowsToContents()

    def row_count(self) -> int:
        return self.proxy.rowCount()

    def selected_term(self) -> str | None:
        rows = self.view.selectionModel().selectedRows(KEY)
        return rows[0].data() if rows else None

    def show_term(self, name: str) -> Term | None:
        """Select the term `name` names (a header, label or key); when none does, say so and
        list every term."""
        self.filter.clear()
        term = find(name) if name else None
        if term is None:
            self.view.clearSelection()
            self.note.setText(f"“{name}” is not a computed term: it is shown as it is. Every term the app "
                              "computes is listed below." if name else "")
            return None
        self.note.setText("")
        for r in range(self.proxy.rowCount()):
            if self.proxy.index(r, KEY).data() == term.key:
                self.view.selectRow(r)
                self.view.scrollTo(self.proxy.index(r, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
                break
        return term
