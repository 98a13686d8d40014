"""Why not? Search the store's chunks by text, pin one, and see its fate as settings change,
and what it would take to bring it in: the smallest verified single-knob changes."""
from __future__ import annotations

import html
from typing import Callable, Iterable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout, QHeaderView, QLabel, QLayout, QLineEdit, QPushButton, QSplitter, QTableView, QVBoxLayout, QWidget,
)

from core.evaluation.fix import FixCandidate
from core.rank.ranking import Ranking
from core.rank.whatif import Change, WhatIf
from core.records import Chunk
from memsense_gui import app_icons
from memsense_gui.models.chunk_search import ChunkSearchModel
from memsense_gui.models.pins import PinsModel
from memsense_gui.models.whatif import WhatIfModel
from memsense_gui.state.session import UPDATING
from memsense_gui.views.dialogs import ask_harmful
from memsense_gui.views.tables import Panel, fit_columns, make_table, selected_id


SPLIT_STRETCH = (2, 2, 3)
"""How the search, the pins and the what-would-change table share the panel's height."""


def _stack(*parts: QWidget | QLayout) -> QWidget:
    """A widget stacking `parts` top to bottom, its table taking the spare height."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, QLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part, 1 if isinstance(part, QTableView) else 0)
    return box


class WhyNotPanel(Panel):
    """Search the store's chunks by text, pin one, and see its fate as settings change."""

    pin_requested = Signal(str)
    unpin_requested = Signal(str)
    whatif_wanted = Signal(str)  # memory_id of the pin shown: work out what it would take
    whatif_apply_wanted = Signal(object)  # core.rank.whatif.Change chosen to apply (shown with its diff first)
    confirm_harmful: Callable[[QWidget, FixCandidate], bool] = staticmethod(ask_harmful)

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
        self.pin_button = QPushButton(app_icons.icon("pin"), "Pin")
        self.pin_button.setToolTip("Pin the chunk to follow its fate as you tune (Ctrl+P)")
        self.unpin_button = QPushButton("Unpin")
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.whatif_label = QLabel()
        self.whatif_label.setWordWrap(True)
        self.whatif_model = WhatIfModel(self)
        self.whatif_view = make_table(self.whatif_model, stretch=WhatIfModel.PUSHES)
        self.whatif_view.setObjectName("whatif-table")
        self.whatif_apply = QPushButton("Apply…")
        self.whatif_apply.setObjectName("whatif-apply")
        self.whatif_apply.setToolTip("Apply the selected change: its settings diff and rank movement first, "
                                     "then one step Ctrl+Z undoes")
        self.whatif_apply.setEnabled(False)
        whatif_row = QHBoxLayout()
        whatif_row.addWidget(self.whatif_label, 1)
        whatif_row.addWidget(self.whatif_apply, 0, Qt.AlignmentFlag.AlignBottom)
        row = QHBoxLayout()
        row.addWidget(QLabel("<b>Pinned</b> — fate under the current settings"))
        row.addStretch(1)
        row.addWidget(self.pin_button)
        row.addWidget(self.unpin_button)
        # three parts in a splitter: at 1280×720 the right dock is ~350 px high, and the parts
        # share it (the what-would-change table first) instead of squeezing the last one
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setObjectName("whynot-split")
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(_stack(self.search, self.count, self.search_view))
        self.split.addWidget(_stack(row, self.pins_view, self.reason))
        self.split.addWidget(_stack(whatif_row, self.whatif_view))
        for i, stretch in enumerate(SPLIT_STRETCH):
            self.split.setStretchFactor(i, stretch)
        for view in (self.search_view, self.pins_view, self.whatif_view):
            view.setMinimumHeight(view.verticalHeader().defaultSectionSize() * 2 + view.horizontalHeader().sizeHint().height() + 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.split)
        fit_whatif(self.whatif_view)
        self._whatif_for: str | None = None
        self._whatif_text = ""  # the label before the changes were judged on a question set
        fit_columns(self.search_view, {0: 11, 1: 6, 2: 16})
        fit_columns(self.pins_view, {0: 11, 1: 16, 2: 4})
        self.search.textChanged.connect(self._search)
        self.search.returnPressed.connect(lambda: self.search_view.selectRow(0))
        self.pin_button.clicked.connect(self._pin_selected)
        self.unpin_button.clicked.connect(self._unpin_selected)
        self._watch(self.search_view)
        self._watch(self.pins_view)
        self.pins_view.selectionModel().selectionChanged.connect(lambda *_: self._show_reason())
        self.whatif_view.selectionModel().selectionChanged.connect(lambda *_: self._whatif_selected())
        self.whatif_view.doubleClicked.connect(lambda *_: self.apply_selected_change())
        self.whatif_apply.clicked.connect(self.apply_selected_change)

    def selected_change(self) -> Change | None:
        rows = self.whatif_view.selectionModel().selectedRows()
        return self.whatif_model.change(rows[0].row()) if rows else None

    def _whatif_selected(self) -> None:
        self.whatif_apply.setEnabled(self.selected_change() is not None)

    def apply_selected_change(self) -> None:
        change = self.selected_change()
        if change is None:
            return
        rows = self.whatif_view.selectionModel().selectedRows()
        effect = self.whatif_model.effect(rows[0].row()) if rows else None
        if effect is not None and effect.harmful and not self.confirm_harmful(self, effect):
            return
        self.whatif_apply_wanted.emit(change)

    def show_effects(self, memory_id: str, effects: Sequence[FixCandidate], questions: int, metric: str) -> None:
        """The changes judged on the question set (SPEC §16): re-ordered, harmful ones last and said so."""
        if memory_id != self._whatif_for or self.whatif_model.answer is None:
            return
        self.whatif_model.set_effects(effects)
        harmful = self.whatif_model.harmful
        said = f"; {harmful} harmful there (listed last)" if harmful else "; none harmful there"
        self.whatif_label.setText(f"{self._whatif_text}. Judged on the question set ({questions} questions, "
                                  f"{html.escape(metric)}){said}")

    def effects_note(self, memory_id: str, note: str) -> None:
        """Why the changes were not judged on a question set (none chosen, or the judging failed)."""
        if memory_id == self._whatif_for and self.whatif_model.answer is not None and self.whatif_model.answer.changes:
            self.whatif_label.setText(f"{self._whatif_text}. {html.escape(note)}")

    def shown_pin(self) -> str | None:
        """The pin whose fate is shown: the selected one, else the first."""
        m = self.pins_model
        rows = self.pins_view.selectionModel().selectedRows()
        row = rows[0].row() if rows else 0
        return m.memory_id(row) if row < m.rowCount() else None

    def _show_reason(self) -> None:
        """The selected pin's fate in full (the first pin's when none is selected), and a
        request for what it would take to bring it in."""
        m = self.pins_model
        rows = self.pins_view.selectionModel().selectedRows()
        row = rows[0].row() if rows else 0
        fate = m.fate(row) if row < m.rowCount() else None
        if fate is None:
            self.reason.setText("")
            self.show_whatif(None, None)
            return
        label = m.index(row, PinsModel.CHUNK).data()
        self.reason.setText(f"<b>{html.escape(label)}</b>: {html.escape(fate.reason)}")
        if fate.status in ("selected", "fallback_fill"):
            self.show_whatif(None, None, f"<b>What would it take:</b> nothing, {html.escape(label)} is returned")
        elif fate.status == UPDATING:  # asked again once the deepest lists are ranked
            self.show_whatif(None, None, "<b>What would it take:</b> waiting for the deepest route lists…")
        else:
            self.whatif_wanted.emit(m.memory_id(row))

    def whatif_pending(self, memory_id: str) -> None:
        self._whatif_for = memory_id
        self.whatif_model.set_answer(None)
        self.whatif_label.setText(f"<b>What would it take</b> to bring in {html.escape(self._short(memory_id))}: "
                                  "re-ranking with each knob moved…")

    def show_whatif(self, memory_id: str | None, answer: WhatIf | None, text: str = "") -> None:
        """The verified changes for `memory_id` (ignored when another pin is shown by now)."""
        if memory_id is not None and memory_id != self._whatif_for:
            return
        user = self.pins_model.user_id
        self.whatif_model.set_answer(answer, user)
        self._whatif_selected()
        if answer is None:
            self.whatif_label.setText(text)
            return
        name = html.escape(self._short(memory_id))
        if answer.changes:
            n = len(answer.changes)
            found = ("1 single change, checked by re-ranking" if n == 1 else
                     f"{n} single changes, each checked by re-ranking (smallest first)")
            self._whatif_text = (f"<b>What would it take</b> to bring in {name}: {found}; hover for words, "
                                 "select one and Apply… to try it")
            self.whatif_label.setText(self._whatif_text)
        else:
            self.whatif_label.setText(f"<b>What would it take</b> to bring in {name}: {html.escape(answer.note)}")

    def _short(self, memory_id: str | None) -> str:
        user = self.pins_model.user_id
        return memory_id[len(user) + 1:] if memory_id and user and memory_id.startswith(user + ":") else memory_id or ""

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


def fit_whatif(view: QTableView) -> None:
    """Every column of the what-would-change table inside a right dock at 1280×720: the numbers
    as wide as they need, the knob and what it pushes out sharing the rest (a long knob name
    elided in its middle; the row's tooltip says it all)."""
    header = view.horizontalHeader()
    for col in (WhatIfModel.FROM, WhatIfModel.TO, WhatIfModel.RANK):
        header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
    for col in (WhatIfModel.KNOB, WhatIfModel.PUSHES):
        header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
    header.setMinimumSectionSize(view.fontMetrics().horizontalAdvance("0") * 4)
    view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
