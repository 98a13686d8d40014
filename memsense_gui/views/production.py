"""The Production view: the live Memsense service's results beside the reproduction."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout

from core.recall.memsense.service import Comparison
from memsense_gui.models.production import ProductionModel
from memsense_gui.views.tables import Panel, fit_columns, make_table


class ProductionPanel(Panel):
    """Production (the service) beside the reproduction (this app), position by position."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("production-panel")
        self.model = ProductionModel(self)
        self.view = make_table(self.model)
        self.summary = QLabel("Connect to a Memsense service (File > Connect to Memsense…) and run a query.")
        self.summary.setObjectName("production-summary")
        self.summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        fit_columns(self.view, {0: 3, 1: 22, 2: 9, 3: 2, 4: 22, 5: 9})
        self._watch(self.view)

    def show_comparison(self, comparison: Comparison, user: str, settings: str) -> None:
        self.model.set_comparison(comparison, user)
        self.summary.setText(f"{comparison.summary} — reproduction with {settings}")

    def show_message(self, text: str) -> None:
        self.model.set_comparison(None)
        self.summary.setText(text)
