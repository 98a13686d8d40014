"""The Evaluation view: presets × metrics, per-category bars, per-question wins and losses.

`EvaluationView` is self-contained: it is given an `evaluate` callable
`(presets, k, progress, cancel) -> list[PresetEvaluation]` and runs it off the GUI thread
(progress bar, Cancel). Clicking a question of the wins / losses list emits
`question_activated(user_id, query, gold_session_ids)`; the main window opens the question in
the inspector with its gold sessions marked.

`install(window)` adds the view to the main window: questions come from a question file
(LoCoMo JSON, project questions or a judged set; the demo questions by default) or are those
judged in the app on the open store, recall runs on the window's engine thread one question
at a time (so the inspector stays usable), and the pools are cached per (user, question
text): evaluating again with other presets, or after more grading, only re-ranks.
"""
from __future__ import annotations

import inspect
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pyqtgraph as pg
from PySide6.QtCore import (
    QCoreApplication, QEvent, QModelIndex, QObject, QPersistentModelIndex, QPoint, QSortFilterProxyModel, Qt, Signal,
    Slot,
)
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QMenu, QProgressBar,
    QPushButton, QSpinBox, QSplitter, QTabWidget, QTableView, QVBoxLayout, QWidget,
)

from core.config import Config
from core.errors import MemsenseError
from core.evaluate import PresetEvaluation, category_name
from core.judged import session_docid
from core.metrics import Comparison, compare, metric_names
from memsense_gui import tasks, theme
from memsense_gui.judging import NOTHING_JUDGED
from memsense_gui.models import RAW_ROLE, _Table

EvaluateFn = Callable[[Mapping[str, Config], int, Callable[[int, int, str], None], threading.Event],
                      Sequence[PresetEvaluation]]
PRESET_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac")


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


# ------------------------------------------------------------------ models

class PresetMetricsModel(_Table):
    """One row per preset: question count and every metric at k (overall)."""

    PRESET, QUESTIONS = 0, 1
    NUMERIC = frozenset(range(1, 7))

    def __init__(self, parent=None):
        super().__init__(parent)
        self.results: list[PresetEvaluation] = []
        self.metrics: tuple[str, ...] = metric_names(4)
        self.HEADERS = ("preset", "questions", *self.metrics)

    def set_results(self, results: Sequence[PresetEvaluation]) -> None:
        self.beginResetModel()
        self.results = list(results)
        self.metrics = results[0].metric_names if results else metric_names(4)
        self.HEADERS = ("preset", "questions", *self.metrics)
        self._n = len(self.results)
        self.endResetModel()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.HEADERS) - 1)

    def raw(self, row: int, col: int) -> Any:
        r = self.results[row]
        if col == self.PRESET:
            return r.preset
        if col == self.QUESTIONS:
            return r.questions
        return r.overall.get(self.metrics[col - 2])

    def display(self, row: int, col: int) -> str | None:
        value = self.raw(row, col)
        return value if isinstance(value, str) else str(value) if col == self.QUESTIONS else _fmt(value)

    def memory_id(self, row: int) -> None:
        return None

    def tooltip(self, row: int, col: int) -> str | None:
        if col < 2:
            return None
        r, metric = self.results[row], self.metrics[col - 2]
        parts = [f"{c} {category_name(c)}: {_fmt(v.get(metric))} ({r.category_counts[c]} questions)"
                 for c, v in r.per_category.items()]
        return f"{r.preset} — {metric}\n" + "\n".join(parts)

    def foreground(self, row: int, col: int) -> None:
        return None

    def background(self, row: int, col: int) -> Any:
        if col < 2 or not self.results:
            return None
        best = max(r.overall.get(self.metrics[col - 2], 0.0) for r in self.results)
        if self.raw(row, col) == best and len(self.results) > 1:
            return theme.current().qcolor("gold")
        return None

    def font(self, row: int, col: int) -> None:
        return None


class QuestionDiffModel(_Table):
    """Questions where preset B scores differently from A on one metric (optionally all)."""

    HEADERS = ("B − A", "question", "category", "A", "B", "gold", "A sessions", "B sessions", "user")
    DIFF, QUESTION, CATEGORY, A, B, GOLD, A_SESSIONS, B_SESSIONS, USER = range(9)
    NUMERIC = frozenset({DIFF, A, B})

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[dict] = []

    def set_rows(self, rows: Sequence[dict]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self._n = len(self.rows)
        self.endResetModel()

    def raw(self, row: int, col: int) -> Any:
        r = self.rows[row]
        return (r["diff"], r["question"], r["category"], r["a"], r["b"], r["gold"], r["a_sessions"],
                r["b_sessions"], r["user"])[col]

    def display(self, row: int, col: int) -> str | None:
        value = self.raw(row, col)
        if col == self.DIFF:
            return f"{value:+.2f}"
        if col in (self.A, self.B):
            return _fmt(value)
        if col == self.CATEGORY:
            return f"{value} {category_name(value)}"
        if isinstance(value, tuple):
            return " ".join(str(s) for s in value)
        return str(value)

    def memory_id(self, row: int) -> str:
        return self.rows[row]["question_id"]

    def tooltip(self, row: int, col: int) -> str | None:
        r = self.rows[row]
        return f"{r['question_id']}: {r['question']}\nclick to open it in the inspector with its gold sessions marked"

    def foreground(self, row: int, col: int) -> Any:
        if col != self.DIFF:
            return None
        diff = self.rows[row]["diff"]
        return theme.current().qcolor("up" if diff > 0 else "down") if diff else None

    def background(self, row: int, col: int) -> None:
        return None

    def font(self, row: int, col: int) -> None:
        return None


def diff_rows(a: PresetEvaluation, b: PresetEvaluation, metric: str, include_ties: bool = False) -> list[dict]:
    """Per question: A's and B's value of `metric`, their sessions and the gold ones; wins
    (B higher) first, then losses, each by question id."""
    rows = []
    for oa, ob in zip(a.outcomes, b.outcomes):
        va, vb = oa.metrics[metric], ob.metrics[metric]
        if va == vb and not include_ties:
            continue
        rows.append({"question_id": oa.question_id, "user": oa.user_id, "question": oa.text, "category": oa.category,
                     "a": va, "b": vb, "diff": vb - va, "gold": oa.gold_sessions, "a_sessions": oa.sessions,
                     "b_sessions": ob.sessions})
    rows.sort(key=lambda r: (-r["diff"], r["question_id"]))
    return rows


# ------------------------------------------------------------------ per-category bars

class CategoryBars(pg.PlotWidget):
    """Grouped bars: one group per category (and "all"), one bar per preset."""

    GROUP_WIDTH = 0.8

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.showGrid(x=False, y=True, alpha=0.25)
        self.setYRange(0, 1.18, padding=0)
        self.bars: list[pg.BarGraphItem] = []
        self.legend = self.addLegend(offset=(10, 5), labelTextSize="9pt", colCount=4)
        self.values: dict[str, list[float]] = {}
        self.groups: list[str] = []
        self.apply_theme()

    def apply_theme(self) -> None:
        t = theme.current()
        self.setBackground(t.base)
        for name in ("left", "bottom"):
            axis = self.getAxis(name)
            axis.setPen(pg.mkPen(t.muted))
            axis.setTextPen(pg.mkPen(t.text))
        self.legend.setLabelTextColor(t.text)

    def _bar(self, i: int) -> pg.BarGraphItem:
        while len(self.bars) <= i:
            color = PRESET_COLORS[len(self.bars) % len(PRESET_COLORS)]
            bar = pg.BarGraphItem(x=[], height=[], width=0.1, brush=color, pen=pg.mkPen(None))
            self.addItem(bar)
            self.bars.append(bar)
        return self.bars[i]

    def set_results(self, results: Sequence[PresetEvaluation], metric: str) -> None:
        cats = sorted({c for r in results for c in r.per_category})
        self.groups = ["all"] + [f"{c} {category_name(c)}" for c in cats]
        n = max(len(results), 1)
        width = self.GROUP_WIDTH / n
        self.legend.clear()
        self.values = {}
        for i, r in enumerate(results):
            heights = [r.overall.get(metric, 0.0)] + [r.per_category.get(c, {}).get(metric, 0.0) for c in cats]
            xs = [g - self.GROUP_WIDTH / 2 + width * (i + 0.5) for g in range(len(self.groups))]
            bar = self._bar(i)
            bar.setOpts(x=xs, height=heights, width=width * 0.92)
            bar.setVisible(True)
            self.legend.addItem(bar, r.preset)
            self.values[r.preset] = heights
        for bar in self.bars[len(results):]:
            bar.setOpts(x=[], height=[])
            bar.setVisible(False)
        self.getAxis("bottom").setTicks([list(enumerate(self.groups))])
        self.setXRange(-0.6, max(len(self.groups) - 0.4, 0.6), padding=0)
        self.setLabel("left", metric)


# ------------------------------------------------------------------ the view

class EvaluationView(QWidget):
    """Evaluate presets on judged questions and see where they differ (see module docstring)."""

    question_activated = Signal(str, str, object)  # user_id, query, tuple of gold session ids
    evaluation_finished = Signal(object)  # list[PresetEvaluation]
    evaluation_failed = Signal(object)  # exception

    def __init__(self, parent: QWidget | None = None, *, evaluate: EvaluateFn | None = None,
                 presets: Callable[[], Mapping[str, Config]] | None = None):
        super().__init__(parent)
        self.evaluate_fn = evaluate
        self.presets_fn = presets or _builtin_presets
        self.results: list[PresetEvaluation] = []
        self.comparison: Comparison | None = None
        self.task: tasks.Task | None = None
        self.runner = tasks.TaskRunner("memsense-evaluation", self)
        self._build()

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
        self.metric_combo = QComboBox()
        self.metric_combo.setObjectName("evaluation-metric")
        self.bars = CategoryBars()
        self.a_combo, self.b_combo = QComboBox(), QComboBox()
        self.ties_check = QCheckBox("ties too")
        self.diff_model = QuestionDiffModel(self)
        self.diff_table = self._table(self.diff_model, "evaluation-questions")
        self.diff_table.clicked.connect(self._activated)
        self.diff_table.activated.connect(self._activated)
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
        for label, w in (("A", self.a_combo), ("B", self.b_combo)):
            pick.addWidget(QLabel(label))
            pick.addWidget(w, 1)
        pick.addWidget(self.ties_check)
        rv.addLayout(pick)
        rv.addWidget(self.summary)
        rv.addWidget(self.diff_table, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        compare_page = QWidget()
        cv = QVBoxLayout(compare_page)
        cv.setContentsMargins(0, 0, 0, 0)
        cv.addLayout(top)
        cv.addWidget(self.status)
        cv.addWidget(split, 1)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(compare_page, "Compare presets")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.tabs)

        self._choose: Callable[[], None] | None = None
        self.source_button.clicked.connect(self._choose_source)
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        for combo in (self.metric_combo, self.a_combo, self.b_combo):
            combo.currentIndexChanged.connect(self._refresh_views)
        self.ties_check.toggled.connect(self._refresh_views)
        if theme.notifier is not None:
            theme.notifier.changed.connect(lambda _t: self.bars.apply_theme())

    def _table(self, model, name: str) -> QTableView:
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(model)
        proxy.setSortRole(RAW_ROLE)
        view = QTableView()
        view.setObjectName(name)
        view.setModel(proxy)
        view.setSortingEnabled(True)
        view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the model's own order until a header is clicked
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        view.verticalHeader().setVisible(False)
        view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        view.horizontalHeader().setStretchLastSection(True)
        return view

    def set_source(self, text: str, choose: Callable[[], None] | None = None) -> None:
        """Show where the questions come from, with a button to choose others."""
        self.source_label.setText(text)
        self.source_button.setVisible(choose is not None)
        self._choose = choose

    def _choose_source(self) -> None:
        if self._choose is not None:
            self._choose()

    # ---- running
    @Slot()
    def start(self) -> tasks.Task | None:
        """Evaluate every preset off the GUI thread (a running evaluation is cancelled first)."""
        if self.evaluate_fn is None:
            self.status.setText("Nothing to evaluate: open a store first.")
            return None
        if self.task is not None and not self.task.done:
            self.task.cancel()
        presets = dict(self.presets_fn())
        k = self.k_spin.value()
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Evaluating {len(presets)} presets at k = {k}…")
        task = self.runner.submit("evaluate", _run_evaluation, self.evaluate_fn, presets, k,
                                  succeeded=self._finished, failed=self._failed, progressed=self._progressed)
        self.task = task
        return task

    @Slot()
    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.status.setText("Cancelling…")

    def _progressed(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{what} %v/%m")

    def _current(self) -> bool:
        """False for the signals of an older, superseded evaluation."""
        sender = self.sender()
        return sender is None or sender is self.task

    def _finished(self, results: Sequence[PresetEvaluation]) -> None:
        if not self._current():
            return
        self._stop()
        self.set_results(results)
        self.evaluation_finished.emit(list(results))

    def _failed(self, exc: BaseException) -> None:
        if not self._current():
            return
        self._stop()
        cancelled = isinstance(exc, tasks.Cancelled) or (self.task is not None and self.task.cancelled)
        self.status.setText("Evaluation cancelled." if cancelled else f"Evaluation failed: {exc}")
        if not cancelled:
            self.evaluation_failed.emit(exc)

    def _stop(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)

    @Slot()
    def shutdown(self) -> None:
        """Cancel any evaluation or tuning and stop the workers (the window is closing)."""
        if self.task is not None:
            self.task.cancel()
        self.runner.shutdown(wait=False)
        autotune = getattr(self, "autotune", None)
        if autotune is not None:
            autotune.shutdown()

    # ---- showing
    def set_results(self, results: Sequence[PresetEvaluation]) -> None:
        """Show an evaluation (also usable without running one)."""
        self.results = list(results)
        self.metrics_model.set_results(self.results)
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
        source = self.diff_table.model().mapToSource(index)
        if not source.isValid():
            return
        row = self.diff_model.rows[source.row()]
        gold = tuple(session_docid(row["user"], s) for s in row["gold"])
        self.question_activated.emit(row["user"], row["question"], gold)


def _builtin_presets() -> Mapping[str, Config]:
    from core.presets import BUILTIN

    return BUILTIN


def _run_evaluation(evaluate: EvaluateFn, presets: Mapping[str, Config], k: int, task: tasks.Task) -> list:
    """Worker-thread body: the evaluate callable with the task's progress and cancel token."""
    results = list(evaluate(presets, k, task.report, task.cancel_event))
    if task.cancelled:
        raise tasks.Cancelled("evaluate")
    return results


# ------------------------------------------------------------------ the main window's source

class EngineBridge(QObject):
    """Lets a worker thread run engine calls on the window's engine thread, one at a time:
    the call is queued to the GUI thread, which submits it to the engine runner; the worker
    waits on a future (checking its cancel token) while the GUI stays responsive."""

    _requested = Signal(object)

    def __init__(self, runner: tasks.TaskRunner, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self._requested.connect(self._submit, Qt.ConnectionType.QueuedConnection)

    def call(self, fn: Callable[..., Any], *args: Any, cancel: threading.Event | None = None) -> Any:
        item: dict[str, Any] = {"fn": fn, "args": args, "future": Future(), "task": None}
        self._requested.emit(item)
        future: Future = item["future"]
        while True:
            if cancel is not None and cancel.is_set():
                raise MemsenseError("evaluation cancelled")
            task = item["task"]
            if task is not None and task.cancelled and not future.done():
                raise MemsenseError("the store was closed during the evaluation")
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                continue

    def _submit(self, item: dict[str, Any]) -> None:
        future: Future = item["future"]
        try:
            item["task"] = self.runner.submit("evaluation recall", _call, item["fn"], item["args"],
                                              succeeded=future.set_result, failed=future.set_exception)
        except RuntimeError as exc:  # the runner was shut down (window closing)
            future.set_exception(MemsenseError(f"the engine is closed ({exc})"))


def _call(fn: Callable[..., Any], args: tuple, task: tasks.Task | None = None) -> Any:
    return fn(*args)


APP_JUDGED = "app"
"""`evaluation/questions` setting for the questions judged in the app on the open store."""


class WindowSource(QObject):
    """Questions from a file or judged in the app, recall through the window's engine, pools
    cached per store."""

    def __init__(self, window: Any, view: EvaluationView):
        super().__init__(view)
        self.window = window
        self.view = view
        self.bridge = EngineBridge(window.engine_runner, self)
        saved = window.settings.value("evaluation/questions", "")
        self.app_judged = saved == APP_JUDGED
        self.path: Path | None = Path(saved) if saved and Path(saved).exists() else _demo_questions()
        self._pools_cache: dict[tuple, dict] = {}
        self._show()

    def _show(self) -> None:
        name = "judged in the app" if self.app_judged else self.path.name if self.path else "none chosen"
        self.view.set_source(f"questions: {name}", self.choose)

    @Slot()
    def choose(self) -> None:
        menu = QMenu(self.view)
        menu.addAction("Judged in the app (this store)", self.use_app_judged)
        menu.addAction("Question file…", self.choose_file)
        button = self.view.source_button
        menu.exec(button.mapToGlobal(QPoint(0, button.height())))

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.view, "Judged questions", str(self.path or ""),
                                              "Question files (*.json *.jsonl);;All files (*)")
        if path:
            self.set_path(path)

    def set_path(self, path: str | Path) -> None:
        self.path = Path(path)
        self.app_judged = False
        self.window.settings.setValue("evaluation/questions", str(self.path))
        self._show()

    def use_app_judged(self) -> None:
        """Evaluate the questions graded in the app (0-3 on a result) on the open store."""
        self.app_judged = True
        self.window.settings.setValue("evaluation/questions", APP_JUDGED)
        self._show()

    def _source(self) -> Path:
        path = self.window.judgments.path if self.app_judged else self.path
        if path is None:
            raise MemsenseError("choose a question file first (Questions…)")
        if self.app_judged and not path.exists():
            raise MemsenseError(NOTHING_JUDGED)
        return path

    def _questions(self, users: Sequence[str] | None = None) -> list:
        from core.evaluate import check_users, judged_only
        from core.judged import load_question_set

        if self.window.engine is None:
            raise MemsenseError("open a store first (File > Open store…)")
        questions = judged_only(load_question_set(self._source()))
        if self.app_judged and not questions:
            raise MemsenseError("no question judged in the app has a relevant result yet: grade results 1-3")
        wanted = set(users) if users is not None else set(self.window.users)
        questions = [q for q in questions if q.user_id in wanted] or questions
        check_users(questions, self.window.users)
        return questions

    def _pools(self, questions: Sequence, depth: int, progress: Callable[[int, int, str], None],
               cancel: threading.Event) -> dict:
        """The pool of every question (id -> pool), recalling on the engine thread only the
        (user, text) pairs not recalled before on this store."""
        cache = self._pools_cache.setdefault((self.window.location, depth), {})
        recall = _recall_fn(self.window.engine, depth)
        todo = list(dict.fromkeys((q.user_id, q.text) for q in questions if (q.user_id, q.text) not in cache))
        for n, (user_id, text) in enumerate(todo):
            progress(n, len(todo), "recall")
            cache[user_id, text] = self.bridge.call(recall, user_id, text, cancel=cancel)
        return {q.question_id: cache[q.user_id, q.text] for q in questions}

    def evaluate(self, presets: Mapping[str, Config], k: int, progress: Callable[[int, int, str], None],
                 cancel: threading.Event) -> list[PresetEvaluation]:
        """Worker thread: load the questions, recall the missing pools on the engine thread, re-rank."""
        from core.evaluate import evaluate_presets, recall_depth

        questions = self._questions()
        pools = self._pools(questions, recall_depth(presets.values()), progress, cancel)
        return evaluate_presets(pools, questions, presets, k, progress, cancel)

    def tune(self, train: Sequence[str], test: Sequence[str], metric: str, trials: int,
             progress: Callable[[int, int, str], None], cancel: threading.Event):
        """Worker thread: pools of the chosen users' questions, then `core.tune.tune` from Memsense's
        default, seeded with the built-in RRF presets."""
        from core.evaluate import recall_depth
        from core.tune import seed_presets, split_users, tune

        questions = self._questions([*train, *test])
        train_q, test_q = split_users(questions, train, test)
        start = Config()
        pools = self._pools(questions, recall_depth([start]), progress, cancel)
        return tune(pools, train_q, test_q, metric, trials=trials, start=start, seeds=seed_presets(start),
                    progress=progress, cancel=cancel)


def _recall_fn(engine: Any, depth: int) -> Callable[[str, str], Any]:
    try:
        takes_depth = "depth" in inspect.signature(engine.recall).parameters
    except (TypeError, ValueError):
        takes_depth = False
    if takes_depth:
        return lambda user, query: engine.recall(user, query, depth=depth)
    return engine.recall


def _demo_questions() -> Path | None:
    try:
        from core.engine import DEMO_QUESTIONS
    except ImportError:
        return None
    return DEMO_QUESTIONS if DEMO_QUESTIONS.exists() else None


def install(window: Any) -> EvaluationView:
    """Add the Evaluation view to the main window, wired to its engine, presets and inspector."""
    from memsense_gui.autotune import AutoTuneView

    view = EvaluationView(window, presets=window.presets.all)
    source = WindowSource(window, view)
    view.evaluate_fn = source.evaluate
    view.source = source
    view.question_activated.connect(window.open_question)
    view.autotune = AutoTuneView(tune=source.tune, users=lambda: list(window.users), save_preset=window.presets.save)
    view.tabs.addTab(view.autotune, "Auto-tune")
    window.users_loaded.connect(lambda _users: view.autotune.refresh_users())
    view._closer = _CloseWatcher(view, window)
    app = QCoreApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(view.shutdown)
    window.add_view("Evaluation", view)
    return view


class _CloseWatcher(QObject):
    """Stops the view's evaluation when the window closes (its engine goes away)."""

    def __init__(self, view: EvaluationView, window: QObject):
        super().__init__(view)
        self.view = view
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Close:
            self.view.shutdown()
        return False
