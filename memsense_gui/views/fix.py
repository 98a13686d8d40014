"""Find a fix: settings that win chosen failing cases back, and what they break elsewhere.

The cases come from Cases or Diagnose (`set_cases`); Find runs `core.evaluation.fix` on the
window's question set (`window.failures_actions`), with progress, and Cancel keeps what was
found. Candidates list their changed knobs, the chosen cases fixed, every question fixed and
broken, the metric before → after with its paired p, and whether Memsense takes them as request
options; the Pareto plot shows cases fixed against other questions broken, a click on a point
selects its candidate. Apply (`apply_requested`) offers the selected candidate's settings with
their diff and the rank movement they cause (the window's Apply dialog), applied as one undo step.
"""
from __future__ import annotations

import html
from typing import Sequence

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QLabel, QPushButton, QSpinBox, QSplitter, QWidget,
)

from core.evaluation.fix import FixCandidate
from memsense_gui.models.failures import FixCandidatesModel
from memsense_gui.plots.pareto import ParetoPlot
from memsense_gui.views.job_strip import JobStrip
from memsense_gui.views.tables import fit_columns, sorting_table, with_buttons
from memsense_gui.workers.failure_jobs import FixRun

DEFAULT_TRIALS = 200
"""Configs tried per search (as `memsense fix`)."""


class FixView(JobStrip, QWidget):
    find_requested = Signal(object, int)  # case ids, trials
    cancel_requested = Signal()
    apply_requested = Signal(object, int)  # FixCandidate, its number (1-based)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.cases: tuple[str, ...] = ()
        self.run: FixRun | None = None
        self.cases_label = QLabel("No cases chosen: select failing cases in Cases or Diagnose, then Find a fix.")
        self.cases_label.setWordWrap(True)
        self.trials = QSpinBox()
        self.trials.setRange(1, 5000)
        self.trials.setValue(DEFAULT_TRIALS)
        self.trials.setPrefix("trials ")
        self.trials.setToolTip("Configs to try: single-knob sweeps first, then an Optuna TPE search")
        self.find_button = QPushButton("Find")
        self.find_button.setObjectName("fix-find")
        self.job_row(self.trials, self.find_button,
                      cancel_tip="Stop the search; the candidates found so far are kept")
        self.model = FixCandidatesModel(self)
        self.table, self.proxy = sorting_table(self.model, stretch=FixCandidatesModel.MEMSENSE)
        self.table.setObjectName("fix-candidates")
        self.plot = ParetoPlot()
        self.apply_button = QPushButton("Apply to settings…")
        self.apply_button.setObjectName("fix-apply")
        self.apply_button.setToolTip("The selected candidate's settings diff and the rank movement it causes, "
                                     "then Apply in one step (Ctrl+Z undoes it)")
        self.apply_button.setEnabled(False)
        self._build()

    def _build(self) -> None:
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(with_buttons(self.table, (self.apply_button,)))
        split.addWidget(self.plot)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([3000, 2000])  # scaled to the width the splitter gets: the table 3/5
        self.job_layout(split, self.cases_label)
        fit_columns(self.table, {0: 30, 1: 8, 2: 7, 3: 7, 4: 13, 5: 5})
        self.find_button.clicked.connect(self.request_find)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.apply_button.clicked.connect(self.apply_selected)
        self.plot.candidate_clicked.connect(self.select_candidate)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())

    # ---- the cases -------------------------------------------------------------------------------
    def set_cases(self, cases: Sequence[str], where: str) -> None:
        self.cases = tuple(cases)
        shown = ", ".join(self.cases[:8]) + (f" and {len(self.cases) - 8} more" if len(self.cases) > 8 else "")
        self.cases_label.setText(f"<b>{len(self.cases)} cases</b> from {html.escape(where)}: {html.escape(shown)}")

    def request_find(self) -> None:
        self.find_requested.emit(self.cases, self.trials.value())

    # ---- running ---------------------------------------------------------------------------------
    def set_running(self, running: bool, text: str = "") -> None:
        super().set_running(running, text)
        self.find_button.setEnabled(not running)

    def show_run(self, run: FixRun) -> None:
        self.run = run
        r = run.result
        self.model.set_candidates(r.candidates, len(r.cases), r.metric)
        self.plot.set_candidates(r.candidates, len(r.cases))
        self.mark_current()
        if r.candidates:
            self.select_candidate(0)
        else:
            self.apply_button.setEnabled(False)

    def mark_current(self) -> None:
        """The run's summary: its figures answer the settings, store and questions on screen."""
        if self.run is None:
            return
        run, r = self.run, self.run.result
        kept = f"history run {run.run_id}" if run.run_id is not None else run.history_note
        stopped = "cancelled after " if r.cancelled else ""
        found = (f"{len(r.candidates)} candidates" if r.candidates else "no config tried wins any case back")
        self.status.setText(f"{stopped}{r.trials} trials: {found}; every figure re-ranked on all {run.questions} "
                            f"questions ({r.metric}; {kept}).")

    def mark_stale(self, why: str) -> None:
        if self.run is not None:
            self.status.setText(f"<b>Out of date:</b> {html.escape(why)}. The candidates below were found from "
                                "the earlier settings; Apply still applies each one's settings as listed.")

    # ---- choosing a candidate --------------------------------------------------------------------
    def selected_row(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return self.proxy.mapToSource(rows[0]).row() if rows else None

    def select_candidate(self, row: int) -> None:
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.table.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                           | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index)

    def _selection_changed(self) -> None:
        row = self.selected_row()
        self.apply_button.setEnabled(row is not None)
        self.plot.select(row)

    def selected_candidate(self) -> FixCandidate | None:
        row = self.selected_row()
        return None if row is None else self.model.candidate(row)

    def apply_selected(self) -> None:
        row = self.selected_row()
        if row is not None:
            self.apply_requested.emit(self.model.candidate(row), row + 1)
