"""The MMR trace as a table of events beside a plot of the two terms of each pick."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout

from core.rank.ranking import Ranking
from memsense_gui.models.mmr_trace import MMRTraceModel
from memsense_gui.plots.mmr import MMRPlot
from memsense_gui.views.tables import Panel, fit_columns, make_table


class MMRPanel(Panel):
    """The MMR trace as a table of events beside a plot of the two terms of each pick."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = MMRTraceModel(self)
        self.view = make_table(self.model, stretch=MMRTraceModel.NOTE)
        self.plot = MMRPlot()
        self.plot.setObjectName("mmr-plot")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view)
        split.addWidget(self.plot)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(split)
        fit_columns(self.view, {0: 4, 1: 5, 2: 11, 3: 7, 4: 7, 5: 8, 6: 11})
        self._watch(self.view)

    def set_ranking(self, ranking: Ranking | None) -> None:
        self.model.set_ranking(ranking)
        self.plot.set_ranking(ranking)
