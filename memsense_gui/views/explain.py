"""The focused chunk's record (`core.rank.record`) as a tree under the glossary's labels, with
Memsense's result fields when it was returned."""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QTreeView, QVBoxLayout, QWidget

from core.rank.glossary import term_at
from core.rank.ranking import Ranking
from core.rank.record import FateOf, ranking_fate
from memsense_gui.models.explain_tree import DictTreeModel


class ExplainPanel(QWidget):
    """The chunk's record as a tree under the glossary's labels (tooltips: formulas), and
    Memsense's result record (`memsense_result`) when it was returned."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = DictTreeModel(self, term_of=term_at)
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setAlternatingRowColors(True)
        self.view.setUniformRowHeights(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.view)

    def show_record(self, record: dict[str, Any] | None) -> None:
        self.model.set_data(record)
        self.view.expandAll()
        self.view.resizeColumnToContents(0)


def explain_record(ranking: Ranking, memory_id: str, fate_of: FateOf = ranking_fate) -> dict[str, Any]:
    """The chunk's record (its fate read by `fate_of`) and, when it was returned, Memsense's result
    record (the §6 fields), whose numbers are the record's."""
    out = ranking.record(memory_id, fate_of).to_json()
    if out["selected_rank"] is not None:
        out["memsense_result"] = ranking.results[out["selected_rank"] - 1]
    return out
