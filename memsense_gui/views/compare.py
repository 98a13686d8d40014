"""Two presets (or the current settings) side by side on the current query."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout

from core.rank.ranking import Ranking
from memsense_gui.models.compare import CompareModel
from memsense_gui.views.tables import Panel, fit_columns, make_table


class ComparePanel(Panel):
    """Two presets (or the current settings) side by side on the current query."""

    CURRENT = "(current settings)"
    selection_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.a_combo = QComboBox()
        self.b_combo = QComboBox()
        for combo, tip in ((self.a_combo, "Ranking A"), (self.b_combo, "Ranking B")):
            combo.setToolTip(f"{tip}: a preset or the current settings")
            combo.currentTextChanged.connect(lambda _t: self.selection_changed.emit())
        self.model = CompareModel(self)
        self.view = make_table(self.model)
        self.summary = QLabel()
        top = QHBoxLayout()
        top.addWidget(QLabel("A"))
        top.addWidget(self.a_combo, 1)
        top.addWidget(QLabel("B"))
        top.addWidget(self.b_combo, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.view)
        fit_columns(self.view, {0: 3, 1: 12, 2: 7, 3: 7, 4: 12, 5: 7, 6: 7})
        self._watch(self.view)

    def set_names(self, names: list[str]) -> None:
        for combo, default in ((self.a_combo, names[0] if names else self.CURRENT), (self.b_combo, self.CURRENT)):
            keep = combo.currentText() or default
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([self.CURRENT, *names])
            combo.setCurrentText(keep if keep in [self.CURRENT, *names] else default)
            combo.blockSignals(False)

    def choose(self, a: str, b: str) -> None:
        self.a_combo.blockSignals(True)
        self.a_combo.setCurrentText(a)
        self.a_combo.blockSignals(False)
        self.b_combo.setCurrentText(b)
        self.selection_changed.emit()

    def set_updating(self) -> None:
        """The rows shown stay, greyed, while the pool deepens for A or B."""
        self.view.setEnabled(False)
        self.summary.setText("Updating: ranking deeper route lists for A and B…")

    def set_rankings(self, a: Ranking | None, b: Ranking | None, gold: frozenset[str]) -> None:
        self.view.setEnabled(True)
        self.model.set_rankings(a, b, gold)
        if a is None or b is None:
            self.summary.setText("Run a query to compare.")
            return
        common = len(set(a.result_ids) & set(b.result_ids))
        moved = sum(1 for i, mid in enumerate(b.result_ids) if mid in a.result_ids and a.result_ids.index(mid) != i)
        self.summary.setText(f"{common} of {max(len(a.result_ids), len(b.result_ids))} results in common, "
                             f"{moved} at another rank")
