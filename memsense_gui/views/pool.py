"""The whole candidate pool with each candidate's fate (sortable on raw values)."""
from __future__ import annotations

from typing import Iterable

from PySide6.QtWidgets import QLabel, QVBoxLayout

from core.rank.ranking import Ranking
from memsense_gui.models.pool import PoolModel
from memsense_gui.views.snippets import show_snippets
from memsense_gui.views.tables import Panel, fit_columns, make_table, select_id, selected_id


class PoolPanel(Panel):
    """The whole candidate pool with each candidate's fate (sortable on raw values)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = PoolModel(self)
        self.view = make_table(self.model, sortable=True, stretch=PoolModel.REASON)
        self.caption = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.view)
        fit_columns(self.view, {0: 6, 1: 40, 2: 12, 3: 5, 4: 7, 5: 8, 6: 10, 7: 9, 8: 7, 9: 7, 10: 18, 11: 18})
        show_snippets(self.view, PoolModel.SNIPPET)
        self._watch(self.view)

    def set_ranking(self, ranking: Ranking | None, gold: frozenset[str], pins: Iterable[str]) -> None:
        keep = selected_id(self.view)
        self.view.selectionModel().blockSignals(True)
        self.model.set_ranking(ranking, gold, pins)
        if keep:
            select_id(self.view, keep)
        self.view.selectionModel().blockSignals(False)
        if ranking is not None:
            self.caption.setText(
                f"{len(ranking.candidates)} candidates in the pool (limit {ranking.config.candidate_limit}), "
                f"{len(ranking.rows)} re-ranked rows, {len(ranking.selection.order)} returned")
