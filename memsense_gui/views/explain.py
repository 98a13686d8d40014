"""The focused chunk's score as a tree of its formula (`core.rank.formula`: the MMR step over
Final over RRF + turn over each route's share), and its record (`core.rank.record`) as a tree
under the glossary's labels, with Memsense's result fields when it was returned."""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHeaderView, QTabWidget, QTreeView, QVBoxLayout, QWidget

from core.rank.formula import FormulaNode, formula_tree
from core.rank.glossary import term_at
from core.rank.ranking import Ranking
from core.rank.record import FateOf, ranking_fate
from memsense_gui.models.explain_tree import DictTreeModel
from memsense_gui.models.formula_tree import FormulaTreeModel


class ExplainPanel(QWidget):
    """Two tabs: Formula, the chunk's score as a tree of its formula; Record, the chunk's record
    as a tree under the glossary's labels (tooltips: formulas), with Memsense's result record
    (`memsense_result`) when it was returned."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.formula_model = FormulaTreeModel(self)
        self.formula_view = _tree(self.formula_model)
        self.formula_view.setObjectName("formula-tree")
        self.formula_view.setIndentation(12)  # seven levels deep: the formulas keep their room
        header = self.formula_view.header()
        header.setSectionResizeMode(FormulaTreeModel.FORMULA, QHeaderView.ResizeMode.Stretch)
        self.model = DictTreeModel(self, term_of=term_at)
        self.view = _tree(self.model)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.formula_view, "Formula")
        self.tabs.addTab(self.view, "Record")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.tabs)

    def show_record(self, record: dict[str, Any] | None, formula: FormulaNode | None = None) -> None:
        """The record (None: nothing focused) and its score's formula tree."""
        self.model.set_data(record)
        self.view.expandAll()
        self.view.resizeColumnToContents(0)
        self.formula_model.set_tree(formula if record is not None else None)
        self.formula_view.expandAll()
        for col in (FormulaTreeModel.TERM, FormulaTreeModel.VALUE):
            self.formula_view.resizeColumnToContents(col)


def _tree(model) -> QTreeView:
    view = QTreeView()
    view.setModel(model)
    view.setAlternatingRowColors(True)
    view.setUniformRowHeights(True)
    return view


def explain_record(ranking: Ranking, memory_id: str, fate_of: FateOf = ranking_fate) -> dict[str, Any]:
    """The chunk's record (its fate read by `fate_of`) and, when it was returned, Memsense's result
    record (the §6 fields), whose numbers are the record's."""
    return explain(ranking, memory_id, fate_of)[0]


def explain(ranking: Ranking, memory_id: str, fate_of: FateOf = ranking_fate) -> tuple[dict[str, Any], FormulaNode]:
    """`explain_record` and the chunk's score as a tree of its formula, from the one record (its
    fate read once)."""
    record = ranking.record(memory_id, fate_of)
    out = record.to_json()
    if out["selected_rank"] is not None:
        out["memsense_result"] = ranking.results[out["selected_rank"] - 1]
    return out, formula_tree(record, ranking.config, ranking.session_first)
