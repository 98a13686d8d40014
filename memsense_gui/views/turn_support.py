"""The turns that support the focused session, with the formula and its numbers."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout

from core.rank.ranking import Ranking
from memsense_gui.models.format import row_position
from memsense_gui.models.turn_support import TurnSupportModel
from memsense_gui.views.tables import Panel, fit_columns, make_table


class TurnSupportPanel(Panel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = TurnSupportModel(self)
        self.view = make_table(self.model)
        self.summary = QLabel(self.model.summary())
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        fit_columns(self.view, {0: 12, 1: 6, 2: 7, 3: 16})
        self._watch(self.view)

    def show_row(self, ranking: Ranking | None, memory_id: str | None) -> None:
        row = None
        if ranking is not None and memory_id is not None:
            i = ranking.pool.index_of(memory_id)
            pos = row_position(ranking, i)
            row = ranking.rows[pos] if pos is not None else None
            if row is not None and not ranking.session_first:
                row = None
        self.model.set_row(ranking, row)
        self.summary.setText(self.model.summary())
