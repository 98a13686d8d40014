"""The Runs view: every evaluation, tune, diagnose and fix run kept beside the open store
(`<store>.history.sqlite`, by the app and by `memsense` alike), across restarts, with the name
and note a user gave it (Name…, Note…; `memsense runs rename|note` alike).

Select one run: "Re-open settings…" offers the chosen config of it with its settings diff and
the rank movement it causes (the window's Apply dialog), applied as one undo step. Select two:
the "A vs B" tab compares them question by question on the chosen metric
(`core.evaluation.history.compare_runs`), each run's config chosen when it ranked several. Select
two or more: the "Compare" tab sets them side by side (`views.runs_compare`). The list follows the
store and is read again whenever the app keeps a run (that run alone), and whenever another process
(`memsense`, a second window) keeps or deletes runs, which the note says.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QInputDialog, QLabel, QPushButton, QSplitter, QTableView, QTabWidget,
    QVBoxLayout, QWidget,
)

from core.evaluation.history import Run, RunDiff, compare_runs
from memsense_gui.models.history import DATASET, KIND, METRIC, NAME, RUN, TIME, RunDiffModel, RunsModel
from memsense_gui.models.table import RAW_ROLE
from memsense_gui.state.context import AppContext
from memsense_gui.views.runs_compare import RunsComparison
from memsense_gui.views.tables import fit_columns, make_table

DEFAULT_METRIC = "recall_all@4"


CHOOSE_RUNS = ("Select one run to re-open its settings, two to compare them question by question, or more to "
               "set them side by side (Compare).")


class HistoryView(QWidget):
    """Runs, and for a selection of one or two: re-open its settings, or compare them."""

    reopen_requested = Signal(object, str)  # Run, config name
    compared = Signal(object)  # RunDiff | None

    def __init__(self, ctx: AppContext, parent: QWidget | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.diff: RunDiff | None = None
        self._build()
        ctx.runs.listed.connect(self.set_runs)
        ctx.runs.recorded.connect(lambda _id: self.refresh(whole=False))
        ctx.runs.failed.connect(self.note.setText)
        ctx.runs.changed_elsewhere.connect(self.note.setText)
        ctx.store_opened.connect(lambda _location: self.refresh())

    def _build(self) -> None:
        self.path_label = QLabel("no store open")
        self.path_label.setObjectName("history-path")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(lambda _checked=False: self.refresh())
        self.metric_combo = QComboBox()
        self.metric_combo.setObjectName("history-metric")
        self.metric_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.metric_combo.currentTextChanged.connect(self._metric_changed)
        top = QHBoxLayout()
        for widget in (self.path_label, QLabel("Metric"), self.metric_combo, self.refresh_button):
            top.addWidget(widget)
        top.setStretch(0, 1)
        self.runs_model = RunsModel(self)
        self.runs_table = make_table(self.runs_model, sortable=True)  # the settings' names stretch, last
        self.runs_table.setObjectName("history-runs")
        fit_columns(self.runs_table, {RUN: 3, NAME: 10, KIND: 5, TIME: 15, DATASET: 12, METRIC: 16})
        self.runs_table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.runs_table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        self.config_a = QComboBox()
        self.config_a.setObjectName("history-config-a")
        self.config_b = QComboBox()
        self.config_b.setObjectName("history-config-b")
        self.config_choice = {self.config_a: "", self.config_b: ""}
        """The config last chosen in each combo: chosen again when the runs are read anew or selected again."""
        for combo in (self.config_a, self.config_b):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentTextChanged.connect(lambda text, c=combo: self._config_chosen(c, text))
        self.reopen_button = QPushButton("Re-open settings…")
        self.reopen_button.setObjectName("history-reopen")
        self.reopen_button.setToolTip("The chosen config of the selected run: its settings diff and the rank movement "
                                      "it causes, then Apply in one step (Ctrl+Z undoes it)")
        self.reopen_button.clicked.connect(lambda _checked=False: self.reopen())
        self.name_button = QPushButton("Name…")
        self.name_button.setToolTip("Give the selected run a name (shown in the list and in comparisons)")
        self.name_button.clicked.connect(lambda _checked=False: self.ask_name("name"))
        self.note_button = QPushButton("Note…")
        self.note_button.setToolTip("Keep a note with the selected run")
        self.note_button.clicked.connect(lambda _checked=False: self.ask_name("note"))
        actions, buttons = QHBoxLayout(), QHBoxLayout()
        for widget in (QLabel("Config A"), self.config_a, QLabel("B"), self.config_b):
            actions.addWidget(widget)
        for widget in (self.reopen_button, self.name_button, self.note_button):
            buttons.addWidget(widget)
        for row in (actions, buttons):
            row.addStretch(1)
        self.note = QLabel(CHOOSE_RUNS)
        self.note.setObjectName("history-note")
        self.note.setWordWrap(True)
        self.diff_model = RunDiffModel(self)
        self.diff_table = make_table(self.diff_model, sortable=True)
        self.diff_table.setObjectName("history-diff")
        fit_columns(self.diff_table, {0: 12, 1: 6, 2: 6})
        split = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        lbox = QVBoxLayout(left)
        lbox.setContentsMargins(0, 0, 0, 0)
        lbox.addLayout(actions)
        lbox.addLayout(buttons)
        lbox.addWidget(self.runs_table, 1)
        split.addWidget(left)
        pair = QWidget()
        box = QVBoxLayout(pair)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.note)
        box.addWidget(self.diff_table, 1)
        self.comparison = RunsComparison(self.ctx.settings)
        self.tabs = QTabWidget()
        self.tabs.addTab(pair, "A vs B")
        self.tabs.addTab(self.comparison, "Compare")
        split.addWidget(self.tabs)
        split.setSizes([420, 580])  # in proportion, once the view has its size: the comparison the larger
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        self._selection_changed()

    # ---- the list
    def refresh(self, whole: bool = True) -> None:
        """Read the open store's runs again (on the history's runner): all, or those after the last read."""
        path = self.ctx.runs.path()
        self.path_label.setText(f"History: {self.ctx.runs.shown()}" if path is not None or self.ctx.runs.source() else "no store open")
        self.ctx.runs.list_runs(whole)

    def set_runs(self, runs: list[Run]) -> None:
        kept = {r.id for r in self.selected_runs()}
        metrics = sorted({m for r in runs for m in r.metrics()})
        current = self.metric_combo.currentText() or DEFAULT_METRIC
        self.metric_combo.blockSignals(True)
        self.metric_combo.clear()
        self.metric_combo.addItems(metrics)
        self.metric_combo.setCurrentText(current if current in metrics else metrics[0] if metrics else "")
        self.metric_combo.blockSignals(False)
        self.runs_model.set_runs(runs, self.metric_combo.currentText(), self.ctx.runs.names)
        self.select_runs([r.id for r in runs if r.id in kept])
        if not runs:
            self.note.setText("No run kept yet: evaluate, tune, diagnose or fix (here or with `memsense`) "
                              "and it shows here.")
        elif not self.selected_runs():
            self.note.setText(CHOOSE_RUNS)

    def _metric_changed(self, metric: str) -> None:
        self.runs_model.set_metric(metric)
        self._compare()
        self.comparison.set_runs(self.selected_runs(), self.ctx.runs.names, metric)

    # ---- selection
    def _view_rows(self, view: QTableView) -> list[int]:
        proxy = view.model()
        rows = sorted({i.row() for i in view.selectionModel().selectedRows()})
        if isinstance(proxy, QSortFilterProxyModel):
            return [proxy.mapToSource(proxy.index(r, 0)).row() for r in rows]
        return rows

    def selected_runs(self) -> list[Run]:
        """The selected runs, oldest first."""
        return sorted((self.runs_model.run_at(r) for r in self._view_rows(self.runs_table)), key=lambda r: r.id)

    def select_runs(self, ids: list[int]) -> None:
        """Select the runs of `ids` (as a user's Ctrl+click would)."""
        view, proxy = self.runs_table, self.runs_table.model()
        view.clearSelection()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for r in range(proxy.rowCount()):
            index = proxy.index(r, 0)
            if int(index.data(RAW_ROLE)) in ids:
                view.selectionModel().select(index, flags)

    def _selection_changed(self) -> None:
        runs = self.selected_runs()
        for combo, run in ((self.config_a, runs[0] if runs else None), (self.config_b, runs[1] if len(runs) > 1 else None)):
            combo.blockSignals(True)
            combo.clear()
            if run is not None:
                combo.addItems(list(run.configs))
                if self.config_choice[combo] in run.configs:  # a re-read of the runs keeps the user's choice
                    combo.setCurrentText(self.config_choice[combo])
            combo.setEnabled(run is not None)
            combo.blockSignals(False)
        self.reopen_button.setEnabled(len(runs) == 1 and bool(runs[0].configs))
        for button in (self.name_button, self.note_button):
            button.setEnabled(len(runs) == 1)
        self._compare()
        self.comparison.set_runs(runs, self.ctx.runs.names, self.metric_combo.currentText())
        if len(runs) > 2:
            self.tabs.setCurrentWidget(self.comparison)

    def _config_chosen(self, combo: QComboBox, text: str) -> None:
        if text:
            self.config_choice[combo] = text
        self._compare()

    def _compare(self) -> None:
        runs = self.selected_runs()
        self.diff = None
        if len(runs) == 2:
            a, b = runs
            try:
                self.diff = compare_runs(a, b, self.metric_combo.currentText(), self.config_a.currentText() or None,
                                         self.config_b.currentText() or None)
            except Exception as exc:  # noqa: BLE001 - runs that cannot be compared say why, in the note
                self.note.setText(f"Runs {a.id} and {b.id} cannot be compared: {exc}")
            else:
                self.note.setText(diff_text(self.diff))
        elif len(runs) > 2:
            self.note.setText(f"{len(runs)} runs selected: the Compare tab sets them side by side; select two to "
                              "compare them here question by question.")
        elif len(runs) == 1:
            self.note.setText(f"Run {runs[0].id} ({runs[0].kind}): re-open the settings of config A.")
        self.diff_model.set_diff(self.diff)
        self.compared.emit(self.diff)

    def ask_name(self, what: str) -> None:
        """Ask for the selected run's name (or note) and keep it."""
        runs = self.selected_runs()
        if len(runs) != 1:
            return
        old_name, old_note = self.ctx.runs.names.get(runs[0].id, ("", ""))
        text, ok = QInputDialog.getText(self, f"Run {runs[0].id}", "Name:" if what == "name" else "Note:",
                                        text=old_name if what == "name" else old_note)
        if ok:
            self.ctx.runs.name(runs[0].id, **{what: text})

    def reopen(self) -> None:
        runs = self.selected_runs()
        if len(runs) == 1 and self.config_a.currentText():
            self.reopen_requested.emit(runs[0], self.config_a.currentText())


def diff_text(diff: RunDiff) -> str:
    out: dict[str, Any] = diff.to_json()
    only = [f"{n} only in run {r}" for n, r in ((out["only_in_a"], diff.a[0]), (out["only_in_b"], diff.b[0])) if n]
    return (f"Run {diff.a[0]} ({diff.a[1]}) against run {diff.b[0]} ({diff.b[1]}), {diff.metric}: "
            f"{out['questions']} questions in both; B higher on {out['wins']}, lower on {out['losses']}"
            + (f" ({'; '.join(only)})" if only else "") + ".")
