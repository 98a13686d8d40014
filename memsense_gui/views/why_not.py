"""Why not? Search the store's chunks by text, pin one, and see its fate as settings change."""
from __future__ import annotations

import html
from typing import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout

from core.rank.ranking import Ranking
from core.records import Chunk
from memsense_gui.models.chunk_search import ChunkSearchModel
from memsense_gui.models.pins import PinsModel
from memsense_gui.views.tables import Panel, fit_columns, make_table, selected_id


class WhyNotPanel(Panel):
    """Search the store's chunks by text, pin one, and see its fate as settings change."""

    pin_requested = Signal(str)
    unpin_requested = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search this user's chunks by words (id, text, tags)…")
        self.search.setClearButtonEnabled(True)
        self.search_model = ChunkSearchModel(self)
        self.search_view = make_table(self.search_model, stretch=ChunkSearchModel.PREVIEW)
        self.pins_model = PinsModel(self)
        self.pins_view = make_table(self.pins_model, stretch=PinsModel.REASON)
        self.count = QLabel()
        self.pin_button = QPushButton("Pin")
        self.pin_button.setToolTip("Pin the chunk to follow its fate as you tune (Ctrl+P)")
        self.unpin_button = QPushButton("Unpin")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.search)
        layout.addWidget(self.count)
        layout.addWidget(self.search_view, 3)
        row = QHBoxLayout()
        row.addWidget(QLabel("<b>Pinned</b> — fate under the current settings"))
        row.addStretch(1)
        row.addWidget(self.pin_button)
        row.addWidget(self.unpin_button)
        layout.addLayout(row)
        layout.addWidget(self.pins_view, 2)
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.reason)
        fit_columns(self.search_view, {0: 11, 1: 6, 2: 16})
        fit_columns(self.pins_view, {0: 11, 1: 16, 2: 4})
        self.search.textChanged.connect(self._search)
        self.search.returnPressed.connect(lambda: self.search_view.selectRow(0))
        self.pin_button.clicked.connect(self._pin_selected)
        self.unpin_button.clicked.connect(self._unpin_selected)
        self._watch(self.search_view)
        self._watch(self.pins_view)
        self.pins_view.selectionModel().selectionChanged.connect(lambda *_: self._show_reason())

    def _show_reason(self) -> None:
        """The selected pin's fate in full (the first pin's when none is selected)."""
        m = self.pins_model
        rows = self.pins_view.selectionModel().selectedRows()
        row = rows[0].row() if rows else 0
        fate = m.fate(row) if row < m.rowCount() else None
        if fate is None:
            self.reason.setText("")
            return
        label = m.index(row, PinsModel.CHUNK).data()
        self.reason.setText(f"<b>{html.escape(label)}</b>: {html.escape(fate.reason)}")

    def set_chunks(self, chunks: Iterable[Chunk]) -> None:
        self.search_model.set_chunks(tuple(chunks))
        self._update_count()

    def _search(self, text: str) -> None:
        self.search_model.set_filter(text)
        self._update_count()

    def _update_count(self) -> None:
        m = self.search_model
        if not self.search.text().strip():
            self.count.setText(f"{m.chunk_count} chunks in this conversation; type to search")
        else:
            more = f" (first {m.LIMIT} shown)" if m.total_matches > m.LIMIT else ""
            self.count.setText(f"{m.total_matches} matching chunks{more}")

    def set_ranking(self, ranking: Ranking | None, pins: Iterable[str]) -> None:
        self.search_model.set_ranking(ranking)
        self.pins_model.set_pins(tuple(pins), ranking)
        self._show_reason()

    def _pin_selected(self) -> None:
        mid = selected_id(self.search_view)
        if mid:
            self.pin_requested.emit(mid)

    def _unpin_selected(self) -> None:
        mid = selected_id(self.pins_view)
        if mid:
            self.unpin_requested.emit(mid)
