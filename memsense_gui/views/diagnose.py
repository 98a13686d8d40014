"""The Diagnose view: where the question set's gold sessions are lost under the current settings.

Stage totals overall and per question category as stacked bars (`plots.stages`); clicking a
segment lists its cases (question, user, gold session, stage, rank, the chunk it was judged by);
double-click or Enter on a case (or Open) asks for it in the main view (`case_opened`); the
selected cases can be handed to Find a fix (`fix_requested`). The view shows what it is given
(`show_run`) and says when that is no longer the current settings' or questions' (`mark_stale`);
`window.failures_actions` runs diagnose and keeps it current.
"""
from __future__ import annotations

import html
from typing import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView, QLabel, QPushButton, QSplitter, QWidget,
)

from core.evaluation.diagnose import RETURNED, STAGE_MEANING, LostSession, by_question
from core.evaluation.evaluate import category_name
from memsense_gui.models.failures import LostSessionsModel
from memsense_gui.plots.stages import StageBars
from memsense_gui.views.job_strip import JobStrip
from memsense_gui.views.tables import fit_columns, sorting_table, with_buttons
from memsense_gui.workers.failure_jobs import NOT_KEPT, DiagnoseRun


class DiagnoseView(JobStrip, QWidget):
    run_requested = Signal()
    cancel_requested = Signal()
    case_opened = Signal(object)  # LostSession
    fix_requested = Signal(object)  # tuple of question ids

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.run: DiagnoseRun | None = None
        self.segment: tuple[int | None, str] | None = None  # None: every lost session
        self.stale = ""
        self.run_button = QPushButton("Diagnose")
        self.run_button.setObjectName("diagnose-button")
        self.run_button.setToolTip("Where each gold session of the question set is lost under the current settings")
        self.job_row(self.run_button,
                      status="Press Diagnose to see where the question set's gold sessions are lost.")
        self.status.setObjectName("diagnose-status")
        self.bars = StageBars()
        self.cases_label = QLabel("")
        self.cases_label.setWordWrap(True)
        self.model = LostSessionsModel(self)
        self.table, self.proxy = sorting_table(self.model, stretch=LostSessionsModel.QUESTION)
        self.table.setObjectName("diagnose-cases")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for text, slot in (("Open in main view", self.open_current),
                           ("Find a fix for the selected cases…", self.request_fix)):
            action = QAction(text, self.table)
            action.triggered.connect(slot)
            self.table.addAction(action)
        self.open_button = QPushButton("Open in main view")
        self.fix_button = QPushButton("Find a fix…")
        self.fix_button.setToolTip("Search for settings that win the selected cases back (Ctrl+Shift+F)")
        self._build()

    def _build(self) -> None:
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.bars)
        split.addWidget(with_buttons(self.table, (self.open_button, self.fix_button), above=self.cases_label))
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        self.job_layout(split)
        fit_columns(self.table, {1: 7, 2: 9, 3: 3, 4: 12, 5: 3, 6: 14})
        self.run_button.clicked.connect(self.run_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.bars.segment_clicked.connect(self.show_segment)
        self.table.activated.connect(self._activated)
        self.open_button.clicked.connect(self.open_current)
        self.fix_button.clicked.connect(self.request_fix)

    # ---- running ---------------------------------------------------------------------------------
    def show_run(self, run: DiagnoseRun) -> None:
        """A finished diagnose: its totals, bars and (by default) every lost gold session."""
        self.run, self.stale = run, ""
        d = run.diagnosis
        kept = (f"history run {run.run_id}" if run.run_id is not None
                else "re-diagnosed as they changed, not kept in the history: Diagnose keeps a run"
                if run.history_note == NOT_KEPT.note else run.history_note)
        self.status.setText(f"k = {d.k}: {d.caption()}, under the current settings ({kept}). "
                            "The bars count gold sessions; click a segment to list its questions.")
        self.bars.set_diagnosis(d)
        self.show_segment(*(self.segment or (None, "")))

    def mark_stale(self, why: str) -> None:
        """The figures on screen are no longer those of the current settings or questions: say so."""
        if self.run is None:
            return
        self.stale = why
        self.status.setText(f"<b>Out of date:</b> {html.escape(why)}. The figures below are of the earlier run.")

    # ---- the cases of a segment --------------------------------------------------------------------
    def show_segment(self, category: int | None, stage: str) -> None:
        """List the cases of one bar segment (`stage` "" : every lost gold session of the row)."""
        self.segment = (category, stage) if stage else None
        items: Sequence[LostSession] = self.run.diagnosis.items if self.run is not None else ()
        chosen = [i for i in items if (category is None or i.category == category)
                  and (i.stage == stage if stage else i.stage not in RETURNED)]
        groups = by_question(chosen, items)
        self.model.set_rows(groups)
        where = "all questions" if category is None else f"category {category} {category_name(category)}"
        what = f"a gold session {stage} ({STAGE_MEANING[stage]})" if stage else "a gold session lost"
        self.cases_label.setText(f"<b>{len(groups)}</b> questions of {where} with {html.escape(what)} "
                                 f"({len(chosen)} gold session{'s' if len(chosen) != 1 else ''})")

    def selected_items(self) -> list[LostSession]:
        rows = self.table.selectionModel().selectedRows()
        return [self.model.item(self.proxy.mapToSource(r).row()) for r in rows]

    def selected_cases(self) -> tuple[str, ...]:
        """The question ids of the selected rows, in table order, each once."""
        return tuple(dict.fromkeys(i.question_id for i in self.selected_items()))

    def _activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        source = self.proxy.mapToSource(index)
        if source.isValid():
            self.case_opened.emit(self.model.item(source.row()))

    def open_current(self) -> None:
        index = self.table.currentIndex()
        if index.isValid():
            self._activated(index)

    def request_fix(self) -> None:
        self.fix_requested.emit(self.selected_cases())
