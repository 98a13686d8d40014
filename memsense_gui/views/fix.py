"""Find a fix: settings that win chosen failing cases back, and what they break elsewhere.

The cases come from Cases or Diagnose (`set_cases`); Find runs `core.evaluation.fix` on the
window's question set (`window.failures_actions`), with progress, and Cancel keeps what was
found. Candidates list their changed knobs, the chosen cases fixed, every question fixed and
broken, the metric over every question before → after with its paired p, the same on the
questions not chosen (out of sample), and whether Memsense takes them as request options. They
are listed in SPEC §16's order: a *harmful* candidate (the metric over every question lower at
paired p < 0.05) says so in the table and the plot, comes after every other one, is never
pre-selected, and applying it asks first, naming the loss. The Pareto plot shows cases fixed
against other questions broken; a click on a point selects its candidate. Apply
(`apply_requested`) offers the selected candidate's settings with their diff and the rank
movement they cause (the window's Apply dialog), applied as one undo step.
"""
from __future__ import annotations

import html
from typing import Callable, Sequence

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QLabel, QPushButton, QSpinBox, QSplitter, QWidget,
)

from core.evaluation.fix import FixCandidate
from memsense_gui.models.failures import FixCandidatesModel
from memsense_gui.plots.pareto import ParetoPlot
from memsense_gui.views.dialogs import ask_harmful
from memsense_gui.views.job_strip import JobStrip
from memsense_gui.views.tables import fit_columns, sorting_table, with_buttons
from memsense_gui.workers.failure_jobs import FixRun

DEFAULT_TRIALS = 200
"""Configs tried per search (as `memsense fix`)."""


class FixView(JobStrip, QWidget):
    find_requested = Signal(object, int)  # case ids, trials
    cancel_requested = Signal()
    apply_requested = Signal(object, int)  # FixCandidate, its number (1-based)

    def __init__(self, parent: QWidget | None = None,
                 confirm_harmful: Callable[[QWidget, FixCandidate], bool] | None = None):
        super().__init__(parent)
        self.confirm_harmful = confirm_harmful or ask_harmful
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
        m = FixCandidatesModel
        fit_columns(self.table, {m.CHANGED: 26, m.VERDICT: 8, m.METRIC: 13, m.OTHERS: 13, m.NET: 5, m.CASES: 8,
                                 m.FIXED: 6, m.BROKEN: 6, m.P: 6})
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
        if r.safe:  # never a harmful one: they come after every safe one (core.evaluation.fix.candidate_order)
            self.select_candidate(r.candidates.index(r.safe[0]))
        else:
            self.table.selectionModel().clearSelection()
            self.apply_button.setEnabled(False)

    def mark_current(self) -> None:
        """The run's summary: its figures answer the settings, store and questions on screen."""
        if self.run is None:
            return
        run, r = self.run, self.run.result
        kept = f"history run {run.run_id}" if run.run_id is not None else run.history_note
        stopped = "cancelled after " if r.cancelled else ""
        verdict = r.verdict()
        if r.candidates and not r.safe:
            verdict = f"<b>{html.escape(verdict)}</b>"
        self.status.setText(f"{stopped}{r.trials} trials: {verdict}; every figure re-ranked on all {run.questions} "
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
        if row is None:
            return
        candidate = self.model.candidate(row)
        if candidate.harmful and not self.confirm_harmful(self, candidate):
            return
        self.apply_requested.emit(candidate, row + 1)

