"""Candidates × routes: the rank each route gave, coloured by strength."""
from __future__ import annotations

from typing import Iterable

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QVBoxLayout

from core.rank.ranking import Ranking
from core.records import ROUTES
from memsense_gui import theme
from memsense_gui.models.route_matrix import RouteMatrixModel
from memsense_gui.models.table import ID_ROLE
from memsense_gui.views.snippets import show_snippets
from memsense_gui.views.tables import Panel, fit_columns, make_table


class MatrixPanel(Panel):
    """Candidates × routes: the rank each route gave, coloured by strength."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = RouteMatrixModel(self)
        self.view = make_table(self.model)
        self.view.setObjectName("route-matrix")
        self.view.setAlternatingRowColors(False)
        # no selection highlight (it would hide the cell colours): the model marks the focused row
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.view.horizontalHeader().setStretchLastSection(False)
        first = RouteMatrixModel.FIRST_ROUTE
        for j in range(first, first + len(ROUTES)):
            self.view.horizontalHeader().setSectionResizeMode(j, QHeaderView.ResizeMode.Stretch)
        fit_columns(self.view, {RouteMatrixModel.POOL_RANK: 6, RouteMatrixModel.SNIPPET: 34, RouteMatrixModel.CHUNK: 12})
        show_snippets(self.view, RouteMatrixModel.SNIPPET)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.legend)
        layout.addWidget(self.view)
        self.view.clicked.connect(lambda index: self.chunk_selected.emit(index.data(ID_ROLE)))
        self.apply_theme()

    def apply_theme(self) -> None:
        t = theme.current()
        strong = theme.blend(t.base, t.accent, 1.0).name()
        weak = theme.blend(t.base, t.accent, 0.2).name()
        muted = theme.blend(t.base, t.muted, 0.25).name()
        self.legend.setText(
            f"Rank of each candidate in each route: <span style='background:{strong};color:white'>&nbsp;1&nbsp;</span> "
            f"strong → <span style='background:{weak}'>&nbsp;deep&nbsp;</span> weak · "
            f"<span style='background:{muted}'>&nbsp;grey&nbsp;</span> found but not counted · empty = missed")
        self.model.refresh()

    def set_ranking(self, ranking: Ranking | None, gold: frozenset[str], pins: Iterable[str]) -> None:
        self.model.set_ranking(ranking, gold, pins)

    def set_focus(self, memory_id: str | None) -> None:
        self.model.set_focus(memory_id)
        row = self.model.row_of(memory_id) if memory_id else None
        if row is not None:
            self.view.scrollTo(self.model.index(row, 0))
