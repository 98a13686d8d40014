"""The Evaluation view: presets × metrics, per-category bars, per-question wins and losses.

`EvaluationView` is self-contained: it is given an `evaluate` callable
`(presets, k, progress, cancel) -> list[PresetEvaluation]` and runs it off the GUI thread
(progress bar, Cancel). Clicking a question of the wins / losses list emits
`question_activated(user_id, query, gold_session_ids)`; the window opens the question in the
inspector with its gold sessions marked. `EvaluationView.for_context(ctx)` is the view on the
open store, with its questions from an `EvaluationSource` and the Auto-tune tab beside it.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel, QMenu, QProgressBar,
    QPushButton, QSizePolicy, QSpinBox, QSplitter, QTabWidget, QTableView, QVBoxLayout, QWidget,
)

from core.config import Config
from core.evaluation.evaluate import PresetEvaluation
from core.evaluation.judged import session_docid
from core.evaluation.metrics import Comparison, compare, metric_names
from memsense_gui import theme
from memsense_gui.models.evaluation import PresetMetricsModel, QuestionDiffModel, diff_rows
from memsense_gui.plots.category_bars import CategoryBars
from memsense_gui.state.context import AppContext
from memsense_gui.views.ab_question import ABQuestionView
from memsense_gui.views.autotune import AutoTuneView
from memsense_gui.views.evaluation_current import CURRENT, CurrentRow
from memsense_gui.state.evaluation_source import EvaluationSource
from memsense_gui.views.file_dialogs import ask_questions
from memsense_gui.views.tables import make_table, set_columns
from memsense_gui.workers.runner import Job, Task, TaskRunner
from memsense_gui.workers.slot import TaskSlot

EvaluateFn = Callable[[Mapping[str, Config], int, Callable[[int, int, str], None], threading.Event],
                      Sequence[PresetEvaluation]]


TABLE_SHARE = 0.62
"""The most of the Compare presets page the metrics table takes (the A/B comparison keeps the rest)."""
COMBO_CHARS = 10
"""Characters of a preset name the A and B pickers always show."""


class EvaluationView(QWidget):
    """Evaluate presets on judged questions and see where they differ (see module docstring)."""

    question_activated = Signal(str, str, object)  # user_id, query, tuple of gold session ids
    evaluation_finished = Signal(object)  # list[PresetEvaluation]
    evaluation_failed = Signal(object)  # exception

    def __init__(self, parent: QWidget | None = None, *, evaluate: EvaluateFn | None = None,
                 presets: Callable[[], Mapping[str, Config]] | None = None,
                 source: EvaluationSource | None = None, autotune: AutoTuneView | None = None):
        super().__init__(parent)
        self.source = source
        self.evaluate_fn = evaluate or (source.evaluate if source is not None else None)
        self.presets_fn = presets or _builtin_presets
        self.results: list[PresetEvaluation] = []
        self.comparison: Comparison | None = None
        self.runner = TaskRunner("memsense-evaluation", self)
        self.slot = TaskSlot(self.runner, succeeded=self._finished, failed=self._failed,
                             cancelled=self._cancelled, progressed=self._progressed)
        self.autotune = autotune
        self.current: CurrentRow | None = None  # keeps the current settings row fresh (for_context)
        self._build()
        if autotune is not None:
            self.tabs.addTab(autotune, "Auto-tune")
        self._size_by_current_tab()
        if source is not None:
            source.changed.connect(self._show_source)
            source.changed.connect(self._questions_changed)
            self._show_source(source.label())

    @classmethod
    def for_context(cls, ctx: AppContext) -> "EvaluationView":
        """The view on the open store: questions from a file or judged in the app, recall on the
        context's engine thread, the auto-tuner beside it, stopped when the window closes."""
        source = ctx.evaluation
        autotune = AutoTuneView(tune=source.tune, users=lambda: list(ctx.users), save_preset=ctx.presets.save,
                                cross_validate=source.cross_validate, forget=source.forget_studies,
                                current=lambda: ctx.current.config)
        view = cls(presets=lambda: with_current(ctx.presets.all(), ctx.current.config), source=source,
                   autotune=autotune)
        ctx.users_loaded.connect(view._users_loaded)
        ctx.store_opened.connect(view._store_opened)
        ctx.closing.connect(view.shutdown)
        view.current = CurrentRow(view, lambda: ctx.current.config, view)
        ctx.current.changed.connect(view.current.check)
        return view

    @property
    def task(self) -> Task | None:
        return self.slot.task

    # ---- construction
    def _build(self) -> None:
        self.run_button = QPushButton("Evaluate")
        self.run_button.setObjectName("evaluate-button")
        self.run_button.setToolTip("Recall every judged question once, then re-rank it under every preset")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.k_spin = QSpinBox()
        self.k_spin.setRange(1, 50)
        self.k_spin.setValue(4)
        self.k_spin.setPrefix("k = ")
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setVisible(False)
        self.status = QLabel("Press Evaluate to score every preset on the judged questions.")
        self.status.setWordWrap(True)
        self.source_label = QLabel("")
        self.source_button = QPushButton("Questions…")
        self.source_button.setVisible(False)
        top = QHBoxLayout()
        for w in (self.run_button, self.cancel_button, self.k_spin, self.source_button, self.source_label):
            top.addWidget(w, 0)
        top.addWidget(self.progress, 1)
        top.addStretch(0)

        self.metrics_model = PresetMetricsModel(self)
        self.metrics_table = self._table(self.metrics_model, "evaluation-metrics")
        set_columns(self.metrics_table, hidden=(PresetMetricsModel.QUESTIONS,))  # one count for all: the status says it
        self.metrics_table.horizontalHeader().setStretchLastSection(False)  # each metric as wide as its figures
        # sized to its contents when they change (`set_results`), not on every resize: Qt measured every
        # cell of every column on each resize of the dock, and again for the split (`_fit_split`)
        self.metrics_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.metrics_table.horizontalHeader().setResizeContentsPrecision(-1)  # a row per preset: every one, in sight or not
        self.metrics_table.resizeColumnsToContents()
        self.metric_combo = QComboBox()
        self.metric_combo.setObjectName("evaluation-metric")
        self.bars = CategoryBars()
        self.a_combo, self.b_combo = QComboBox(), QComboBox()
        self.ties_check = QCheckBox("ties too")
        self.diff_model = QuestionDiffModel(self)
        self.diff_table = self._table(self.diff_model, "evaluation-questions")
        self.diff_table.clicked.connect(self._activated)
        self.diff_table.activated.connect(self._activated)
        self.diff_table.activated.connect(lambda _i: self.tabs.setCurrentWidget(self.ab_view))
        self.summary = QLabel("")
        self.summary.setWordWrap(True)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.metrics_table, 2)
        row = QHBoxLayout()
        row.addWidget(QLabel("metric"))
        row.addWidget(self.metric_combo, 1)
        lv.addLayout(row)
        lv.addWidget(self.bars, 3)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        pick = QHBoxLayout()
        for label, combo in (("A", self.a_combo), ("B", self.b_combo)):
            pick.addWidget(QLabel(label))
            pick.addWidget(combo, 1)
        pick.addWidget(self.ties_check)
        rv.addLayout(pick)
        rv.addWidget(self.summary)
        rv.addWidget(self.diff_table, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        for combo in (self.a_combo, self.b_combo):
            combo.setMinimumContentsLength(COMBO_CHARS)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.split = split
        self._split_moved = False  # the user's own split is kept
        split.splitterMoved.connect(lambda *_: setattr(self, "_split_moved", True))
        compare_page = QWidget()
        cv = QVBoxLayout(compare_page)
        cv.setContentsMargins(0, 0, 0, 0)
        cv.addLayout(top)
        cv.addWidget(self.status)
        cv.addWidget(split, 1)
        self.tabs: QTabWidget = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(compare_page, "Compare presets")
        self.ab_view: ABQuestionView = ABQuestionView()
        self.tabs.addTab(self.ab_view, "A/B question")
        self.tabs.currentChanged.connect(self._size_by_current_tab)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.tabs)

        self.source_button.clicked.connect(self._choose_source)
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        for combo in (self.metric_combo, self.a_combo, self.b_combo):
            combo.currentIndexChanged.connect(self._refresh_views)
        self.ties_check.toggled.connect(self._refresh_views)
        theme.on_change(self.bars.apply_theme)

    def _size_by_current_tab(self, _index: int = -1) -> None:
        """The tabs ask for the room of the page shown only: a tab stack asks for its widest page's
        minimum (Auto-tune's), which made the dock scroll sideways at 1280×720 on Compare presets."""
        for i in range(self.tabs.count()):
            page = self.tabs.widget(i)
            policy = QSizePolicy.Policy.Preferred if i == self.tabs.currentIndex() else QSizePolicy.Policy.Ignored
            if page is not None:
                page.setSizePolicy(policy, policy)
        self.tabs.updateGeometry()

    def _table(self, model, name: str) -> QTableView:
        """A sortable shared table (`views.tables`: column chooser, whole text of a cut cell as its
        tooltip, no sideways scroll on a click), in the model's own order until a header is clicked."""
        view = make_table(model, sortable=True)
        view.setObjectName(name)
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setResizeContentsPrecision(0)  # columns fit the rows in sight: with Qt's 1000 rows, each resize of
        # the dock measured every question's cells, and making room for the results froze the window 0.7-0.9 s
        return view

    def _show_source(self, text: str) -> None:
        """Show where the questions come from, with a button to choose others."""
        self.source_label.setText(text)
        self.source_button.setVisible(True)

    def _choose_source(self) -> None:
        if self.source is None:  # the button shows only with a source
            return
        menu = QMenu(self)
        menu.addAction("Judged in the app (this store)", self.source.use_app_judged)
        menu.addAction("Question file…", self._choose_file)
        menu.exec(self.source_button.mapToGlobal(QPoint(0, self.source_button.height())))

    def _choose_file(self) -> None:
        if self.source is None:
            return
        source = self.source
        path = ask_questions(self, source.ctx.settings, source.path)
        if path:  # a file that is not a question set is refused in one dialog; the set stays
            source.ctx.attempt(lambda: source.set_path(path), "Choosing questions")

    def _store_opened(self, _location: str) -> None:
        """Another store: the figures shown were of the last one."""
        self._forget("Press Evaluate to score every preset on the judged questions of this store.")

    def _questions_changed(self, _label: str) -> None:
        """Other questions: the figures shown were of the others (an export would name the new ones)."""
        self._forget("Press Evaluate to score every preset on these questions.")

    def _forget(self, note: str) -> None:
        self.slot.cancel()
        if self.current is not None:
            self.current.slot.cancel()
        self.set_results([])
        self.status.setText(note)

    def _users_loaded(self, _users: list) -> None:
        if self.autotune is not None:
            self.autotune.refresh_users()

    # ---- running
    @Slot()
    def start(self) -> Task | None:
        """Evaluate every preset off the GUI thread (a running evaluation is cancelled first)."""
        if self.evaluate_fn is None:
            self.status.setText("Nothing to evaluate: open a store first.")
            return None
        presets = dict(self.presets_fn())
        k = self.k_spin.value()
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Evaluating {len(presets)} presets at k = {k}…")
        return self.slot.start("evaluate", _run_evaluation, self.evaluate_fn, presets, k)

    @Slot()
    def cancel(self) -> None:
        self.slot.cancel()
        self.status.setText("Cancelling…")

    def _progressed(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{what} %v/%m")

    def _finished(self, results: Sequence[PresetEvaluation]) -> None:
        self._stop()
        self.set_results(results)
        note = getattr(self.source, "missing_note", "")
        if note:  # gold the store lacks: those questions cannot score, say so beside the figures
            self.status.setText(f"{self.status.text()} Warning: {note}")
        if self.current is not None:
            self.current.check()  # the settings moved while it ran
        self.evaluation_finished.emit(list(results))

    def _failed(self, exc: BaseException) -> None:
        self._stop()
        self.status.setText(f"Evaluation failed: {exc}")
        self.evaluation_failed.emit(exc)

    def _cancelled(self, _exc: BaseException) -> None:
        self._stop()
        self.status.setText("Evaluation cancelled.")

    def _stop(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)

    @Slot()
    def shutdown(self) -> None:
        """Cancel any evaluation or tuning and stop the workers (the window is closing)."""
        self.slot.cancel()
        self.runner.shutdown(wait=False)
        if self.autotune is not None:
            self.autotune.shutdown()

    # ---- showing
    def _fit_metrics_table(self) -> None:
        """Every preset's row on screen: the table never shrinks below its rows (the dock scrolls)."""
        t = self.metrics_table
        rows = max(self.metrics_model.rowCount(), 2)
        t.setMinimumHeight(t.horizontalHeader().sizeHint().height() + rows * t.verticalHeader().defaultSectionSize()
                           + t.horizontalScrollBar().sizeHint().height() + 2 * t.frameWidth())

    def _fit_split(self) -> None:
        """The metrics table as wide as its columns, up to `TABLE_SHARE` of the page (it scrolls
        beyond), the A/B comparison the rest: at 1280×720 the table took its whole width and the
        comparison's preset names and questions were cut ("memsens", "fusion_no")."""
        if self._split_moved:
            return
        total = sum(self.split.sizes())
        if total <= 0:
            return
        t = self.metrics_table
        bar = t.verticalScrollBar().sizeHint().width() if t.verticalScrollBar().isVisible() else 0  # rows all shown: none
        header = t.horizontalHeader()  # each shown column as wide as its contents (`set_results` sized them)
        columns = sum(header.sectionSize(c) for c in range(header.count()) if not header.isSectionHidden(c))
        need = columns + 2 * t.frameWidth() + bar
        left = min(need, int(total * TABLE_SHARE))
        self.split.setSizes([left, total - left])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit_split()

    def set_results(self, results: Sequence[PresetEvaluation]) -> None:
        """Show an evaluation (also usable without running one)."""
        self.results = list(results)
        self.metrics_model.set_results(self.results)
        self._fit_metrics_table()
        self.metrics_table.resizeColumnsToContents()
        self._fit_split()
        names = self.results[0].metric_names if self.results else metric_names(self.k_spin.value())
        presets = [r.preset for r in self.results]
        for combo, items, keep in ((self.metric_combo, names, 1), (self.a_combo, presets, 0),
                                   (self.b_combo, presets, 1 if len(presets) > 1 else 0)):
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(list(items))
            if current in items:
                combo.setCurrentText(current)
            elif items:
                combo.setCurrentIndex(min(keep, len(items) - 1))
            combo.blockSignals(False)
        if self.results:
            n = self.results[0].questions
            self.status.setText(f"{len(self.results)} presets on {n} judged questions, k = {self.results[0].k}. "
                                "Click a question to open it in the inspector.")
        self._refresh_views()

    def _refresh_views(self, *_: Any) -> None:
        metric = self.metric_combo.currentText()
        if not self.results or not metric:
            self.bars.set_results([], metric)
            self.diff_model.set_rows([])
            self.summary.setText("")
            return
        self.bars.set_results(self.results, metric)
        by_name = {r.preset: r for r in self.results}
        a, b = by_name.get(self.a_combo.currentText()), by_name.get(self.b_combo.currentText())
        if a is None or b is None:
            return
        self.comparison = compare(a.scores(metric), b.scores(metric), metric)
        c = self.comparison
        self.summary.setText(
            f"{metric}: A {a.preset} {c.mean_a:.3f} → B {b.preset} {c.mean_b:.3f} ({c.delta:+.3f}); "
            f"B wins {c.wins}, loses {c.losses}, ties {c.ties}; paired randomisation p = {c.p_value:.4f}")
        self.diff_model.set_rows(diff_rows(a, b, metric, self.ties_check.isChecked()))

    def _activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        proxy = self.diff_table.model()
        source = proxy.mapToSource(index) if isinstance(proxy, QSortFilterProxyModel) else index
        if not source.isValid():
            return
        row = self.diff_model.rows[source.row()]
        self.show_ab(row)
        gold = tuple(session_docid(row["user"], s) for s in row["gold"])
        self.question_activated.emit(row["user"], row["question"], gold)

    def show_ab(self, row: dict) -> None:
        """The question of a comparison row under A and B side by side (A/B question tab)."""
        by_name = {r.preset: r for r in self.results}
        a, b = by_name.get(self.a_combo.currentText()), by_name.get(self.b_combo.currentText())
        if a is None or b is None:
            return
        oa = next(o for o in a.outcomes if o.question_id == row["question_id"])
        ob = next(o for o in b.outcomes if o.question_id == row["question_id"])
        chunks = self.source.chunks_of(row["user"], row["question"]) if self.source is not None else {}
        self.ab_view.show_question(row["question"], self.metric_combo.currentText(), (a.preset, oa), (b.preset, ob),
                                   chunks)


def with_current(presets: Mapping[str, Config], current: Config) -> dict[str, Config]:
    """Every preset, then the settings on screen as `CURRENT`, so unsaved tuning is compared too."""
    return {**presets, CURRENT: current}


def _builtin_presets() -> Mapping[str, Config]:
    from core.config.presets import BUILTIN

    return BUILTIN


def _run_evaluation(evaluate: EvaluateFn, presets: Mapping[str, Config], k: int, task: Job) -> list:
    """Worker-thread body: the evaluate callable with the task's progress and cancel token."""
    results = list(evaluate(presets, k, task.report, task.cancel_event))
    task.check()
    return results
