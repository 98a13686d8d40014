"""Compare any number of kept runs side by side (the Runs view's Compare tab).

Each selected run gives one side per config (or, with a config chosen, that config of each run that
has it). The comparison (`core.evaluation.experiments.compare_sides`) is worked out off the GUI
thread: each side's mean with its 95 % interval and, against the chosen baseline, the paired p and
the questions won and lost; then the question × run matrix, filterable by category and by "changed
between these runs". Runs of other question files are refused with one line unless "other
files" is ticked. Double-click (or Enter on) a matrix cell: the question opens in the inspector with
that run's settings (`question_opened(user, text, cfg, what)`). Export writes the comparison as CSV
or as a self-contained HTML report.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSettings, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget,
)

from core.atomic import write_output
from core.errors import MemsenseError
from core.evaluation.evaluate import category_name
from core.evaluation.experiments import RunComparison, compare_sides, comparison_html, question_index, side_of
from core.evaluation.history import Run
from core.records import Question
from memsense_gui.models.experiments import MatrixModel, SidesModel
from memsense_gui.views.evaluation_current import CURRENT
from memsense_gui.views.file_dialogs import ask_save
from memsense_gui.views.tables import fit_columns, make_table
from memsense_gui.workers.runner import Job, TaskRunner
from memsense_gui.workers.slot import TaskSlot

EVERY_CONFIG = "every config of each run"
SETTLE_MS = 30
"""How long a change of the runs selected settles before they are compared."""


def compare_job(runs: Sequence[Run], names: dict[int, tuple[str, str]], config: str, metric: str, baseline: int,
                across: bool, task: Job) -> tuple[RunComparison, dict[str, Question]]:
    """Worker thread: the sides of `runs` compared on `metric` (module docstring), and the questions of the
    first run's file (to open one), when that file is still there with the same bytes."""
    sides = []
    for run in runs:
        name = names.get(run.id, ("", ""))[0]
        configs = list(run.results) if config == EVERY_CONFIG else [config] if config in run.results else []
        sides += [side_of(run, c, name) for c in configs]
    task.check()
    if len(sides) < 2:
        raise MemsenseError(f"fewer than two of these runs scored {config!r}: choose another config")
    questions = question_index(runs[0])
    result = compare_sides(sides, metric, min(baseline, len(sides) - 1), across,
                           {q: x.category for q, x in questions.items()}, check=task.check)
    return result, questions


def prepare(task: Job) -> None:
    """Worker thread, once: import scipy's statistics (1 to 4 s cold), which the comparison's intervals use,
    before the first comparison asks, so it shows in well under a second."""
    import scipy.stats  # noqa: F401 - imported for its side effect: loaded once per process


def default_config(runs: Sequence[Run]) -> str:
    """What a comparison shows first: every config when each run ranked one; else the current settings
    when every run ranked them (the app's evaluations: the presets are the same in each), else the first
    config (in the first run's order) that every run ranked, else every config."""
    if all(len(r.results) == 1 for r in runs):
        return EVERY_CONFIG
    common = [c for c in (runs[0].results if runs else ()) if all(c in r.results for r in runs)]
    return CURRENT if CURRENT in common else common[0] if common else EVERY_CONFIG


class RunsComparison(QWidget):
    """The Compare tab (module docstring)."""

    compared = Signal(object)  # RunComparison | None
    question_opened = Signal(str, str, object, str)  # user, question text, Config, what

    def __init__(self, settings: QSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings
        self.result: RunComparison | None = None
        self.questions: dict[str, Question] = {}
        self.runs: list[Run] = []
        self.names: dict[int, tuple[str, str]] = {}
        self.metric_name = ""
        self.runner = TaskRunner("memsense-compare-runs", self)
        self.slot = TaskSlot(self.runner, succeeded=self._done, failed=self._failed, cancelled=lambda _e: None)
        self.runner.submit("prepare the statistics", prepare)
        self._soon = QTimer(self)  # a selection made row by row (Shift+click, select_runs) compares once
        self._soon.setSingleShot(True)
        self._soon.setInterval(SETTLE_MS)
        self._soon.timeout.connect(self._recompare)
        self._build()

    def _build(self) -> None:
        self.config_combo = QComboBox()
        self.config_combo.setObjectName("runs-config")
        self.baseline_combo = QComboBox()
        self.baseline_combo.setObjectName("runs-baseline")
        self.baseline_combo.setToolTip("The run every other is tested against (paired p, won, lost)")
        self.across_check = QCheckBox("other files")
        self.across_check.setToolTip("Compare runs of different question files on the questions they share")
        self.category_combo = QComboBox()
        self.category_combo.setObjectName("runs-category")
        self.changed_check = QCheckBox("changed")
        self.changed_check.setObjectName("runs-changed")
        self.changed_check.setToolTip("Only the questions on which these runs do not all agree")
        self.csv_button = QPushButton("CSV…")
        self.html_button = QPushButton("HTML…")
        for b, what in ((self.csv_button, "CSV"), (self.html_button, "a self-contained HTML report")):
            b.setToolTip(f"Export this comparison as {what}")
            b.setEnabled(False)
        self.status = QLabel("Select two or more runs to compare them side by side.")
        self.status.setObjectName("runs-compare-status")
        self.status.setWordWrap(True)
        self.sides_model = SidesModel(self)
        self.sides_table = make_table(self.sides_model, sortable=False)
        self.sides_table.setObjectName("runs-sides")
        fit_columns(self.sides_table, {0: 14, 1: 5, 2: 11, 3: 7, 4: 4, 5: 4})
        self.matrix_model = MatrixModel(self)
        self.matrix_table = make_table(self.matrix_model, sortable=True)
        self.matrix_table.setObjectName("runs-matrix")
        row1, row2 = QHBoxLayout(), QHBoxLayout()
        top: tuple[QWidget, ...] = (self.config_combo, QLabel("vs"), self.baseline_combo)
        bottom: tuple[QWidget, ...] = (self.category_combo, self.changed_check, self.across_check, self.csv_button,
                                       self.html_button)
        for row, widgets in ((row1, top), (row2, bottom)):
            for w in widgets:
                row.addWidget(w)
            row.addStretch(1)
        for combo in (self.config_combo, self.baseline_combo, self.category_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(12)
        self.config_combo.setToolTip("The config of each run compared (a run that ranked several)")
        self.category_combo.setToolTip("Only the questions of one category in the matrix")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.sides_table)
        split.addWidget(self.matrix_table)
        split.setSizes([300, 300])  # in proportion: every run's figures in sight above the matrix
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row1)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)
        layout.addLayout(row2)
        self.config_combo.currentTextChanged.connect(lambda _t: self._recompare())
        self.baseline_combo.currentIndexChanged.connect(lambda _i: self._recompare())
        self.across_check.toggled.connect(lambda _on: self._recompare())
        self.category_combo.currentIndexChanged.connect(lambda _i: self._filter())
        self.changed_check.toggled.connect(lambda _on: self._filter())
        self.csv_button.clicked.connect(lambda _c=False: self.export("csv"))
        self.html_button.clicked.connect(lambda _c=False: self.export("html"))
        self.matrix_table.activated.connect(self._open)

    # ---- comparing
    def set_runs(self, runs: Sequence[Run], names: dict[int, tuple[str, str]], metric: str) -> None:
        """Compare these runs (oldest first) on `metric`; fewer than two clears the tab."""
        self.runs, self.names, self.metric_name = list(runs), dict(names), metric
        configs = sorted({c for r in runs for c in r.results})
        items = [EVERY_CONFIG, *configs]
        keep = self.config_combo.currentText()
        combo = self.config_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(items)
        combo.setCurrentText(keep if keep in items and keep != EVERY_CONFIG else default_config(runs))
        combo.blockSignals(False)
        self._fill_baselines()
        self._soon.start()

    def _fill_baselines(self) -> None:
        config = self.config_combo.currentText()
        labels = [side_of(r, c, self.names.get(r.id, ("", ""))[0]).label for r in self.runs
                  for c in (r.results if config == EVERY_CONFIG else [config] if config in r.results else [])]
        keep = self.baseline_combo.currentIndex()
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        self.baseline_combo.addItems(labels)
        self.baseline_combo.setCurrentIndex(keep if 0 <= keep < len(labels) else 0)
        self.baseline_combo.blockSignals(False)

    def _recompare(self) -> None:
        if self.sender() is self.config_combo:
            self._fill_baselines()
        if len(self.runs) < 2:
            self.slot.cancel()
            self._show(None, "Select two or more runs to compare them side by side.")
            return
        self.status.setText(f"Comparing {len(self.runs)} runs on {html.escape(self.metric_name)}…")
        self.slot.start("compare runs", compare_job, self.runs, self.names, self.config_combo.currentText(),
                        self.metric_name, max(0, self.baseline_combo.currentIndex()), self.across_check.isChecked())

    def _done(self, payload: tuple[RunComparison, dict[str, Question]]) -> None:
        result, self.questions = payload
        n = len(result.figures)
        files = (f"; {len(result.datasets)} question files, compared on the questions they share"
                 if len(result.datasets) > 1 else "")
        left = f" ({result.left_out} scored by only some left out)" if result.left_out else ""
        self._show(result, f"{n} runs on {result.metric}, {len(result.questions)} questions every run scored{left}"
                           f"{files}; {len(result.changed)} differ between them.")

    def _failed(self, exc: BaseException) -> None:
        self._show(None, f"These runs cannot be compared: {exc}")

    def _show(self, result: RunComparison | None, text: str) -> None:
        self.result = result
        self.status.setText(text)
        self.sides_model.set_result(result)
        cats = sorted(set(result.categories.values())) if result is not None else []
        self.category_combo.blockSignals(True)
        self.category_combo.clear()
        self.category_combo.addItem("every category", None)
        for c in cats:
            self.category_combo.addItem(category_name(c), c)
        self.category_combo.blockSignals(False)
        for b in (self.csv_button, self.html_button):
            b.setEnabled(result is not None)
        self._filter()
        self.compared.emit(result)

    def _filter(self) -> None:
        result = self.result
        rows = result.rows(self.category_combo.currentData(), self.changed_check.isChecked()) if result else []
        self.matrix_model.set_rows(result, rows)

    # ---- using it
    def _open(self, index: QModelIndex | QPersistentModelIndex) -> None:
        """A matrix cell: its question in the inspector under that run's settings (a question cell: the baseline's)."""
        result = self.result
        if result is None or not index.isValid():
            return
        proxy = self.matrix_table.model()
        source = proxy.mapToSource(index) if isinstance(proxy, QSortFilterProxyModel) else index
        qid = self.matrix_model.question(source.row())
        question = self.questions.get(qid)
        if question is None:
            self.status.setText(f"{html.escape(qid)}: its question file is gone or changed since the run, so it "
                                "cannot be opened")
            return
        col = source.column() - 2
        figure = result.figures[col if col >= 0 else result.baseline]
        run = next(r for r in self.runs if r.id == figure.run_id)
        self.question_opened.emit(question.user_id, question.text, run.config(figure.config),
                                  f"settings of {figure.label}")

    def export(self, kind: str, path: str | Path | None = None) -> Path | None:
        if self.result is None:
            return None
        if path is None:
            picked = ask_save(self, self.settings, "comparison", f"Export the comparison as {kind.upper()}",
                              f"{kind.upper()} (*.{kind})", f"runs-compared.{kind}")
            if picked is None:
                return None
            path = picked[0]
        text = self.result.to_csv() if kind == "csv" else comparison_html(self.result)
        try:
            written = write_output(Path(path), text)
        except MemsenseError as exc:
            self.status.setText(str(exc))
            return None
        self.status.setText(f"Wrote the comparison to {html.escape(str(written))}.")
        return written

    def shutdown(self) -> None:
        self.runner.shutdown(wait=False)
