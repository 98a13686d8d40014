"""The Impact view: what settings B change against A on real queries nobody judged (SPEC §14).

Choose a query file (USER<TAB>QUERY lines, or JSON Lines with "user" and "query" as exported
from a live Memsense's logs: `core.evaluation.impact.read_queries`, as `memsense impact` reads
it) and A and B (the current settings, the pinned baseline, a preset or a config file); Run
recalls each query once on the open store and ranks it under both (`core.evaluation.impact`,
on a task runner: progress, Cancel). The totals and the per-query table (sortable by every
column) are core's figures. Double-click a query: it opens in the main view with A pinned as
the baseline and B as the current settings. When A, B, k or the store change after a run, the
figures are marked stale until run again.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from core.config import TOP_K_MAX, Config
from core.errors import MemsenseError
from core.evaluation.impact import Impact, Query, read_queries
from memsense_gui.models.impact import QUERY, ImpactModel
from memsense_gui.state.context import AppContext
from memsense_gui.views.config_choice import ConfigChoice
from memsense_gui.views.tables import fit_columns, make_table
from memsense_gui.workers import run_jobs
from memsense_gui.workers.runner import Task, TaskRunner
from memsense_gui.workers.slot import TaskSlot

NOT_RUN = "Choose a query file and A and B, then Run."


@dataclass(frozen=True)
class ImpactRun:
    """What the figures on screen were computed from."""

    queries: Path
    a: tuple[str, Config]
    b: tuple[str, Config]
    location: str


class ImpactView(QWidget):
    """Query file, A, B, k, Run/Cancel, the totals, and the per-query table."""

    query_opened = Signal(object, str, str)  # ImpactRun, user id, query
    impact_finished = Signal(object)  # Impact

    def __init__(self, ctx: AppContext, parent: QWidget | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.queries_path: Path | None = None
        self.queries: list[Query] = []
        self.impact: Impact | None = None
        self.run_with: ImpactRun | None = None
        self._pending: ImpactRun | None = None
        self.runner = TaskRunner("memsense-impact", self)
        self.slot = TaskSlot(self.runner, succeeded=self._finished, failed=self._failed, cancelled=self._cancelled,
                             progressed=self._progressed)
        self._build()
        for signal in (ctx.current.changed, ctx.presets.presets_changed, ctx.session.baseline_changed,
                       ctx.store_opened, self.a_choice.choice_changed, self.b_choice.choice_changed,
                       self.k_spin.valueChanged):
            signal.connect(self._check_stale)
        ctx.store_opened.connect(self._store_changed)
        ctx.closing.connect(self.shutdown)

    def _build(self) -> None:
        self.file_label = QLabel("no query file")
        self.file_label.setObjectName("impact-file")
        self.file_button = QPushButton("Queries…")
        self.file_button.setToolTip("A text file of real queries: USER<TAB>QUERY a line, or JSON Lines with "
                                    "\"user\" and \"query\" (as exported from a live Memsense's logs)")
        self.file_button.clicked.connect(self._ask_file)
        self.set_button = QPushButton("Store's questions")
        self.set_button.setObjectName("impact-question-set")
        self.set_button.setToolTip("The question set of the open store, each question as a real query (unjudged)")
        self.set_button.clicked.connect(lambda _checked=False: self.use_question_set())
        self.a_choice = ConfigChoice(self.ctx, "baseline")
        self.a_choice.setObjectName("impact-a")
        self.b_choice = ConfigChoice(self.ctx, "current")
        self.b_choice.setObjectName("impact-b")
        self.k_spin = QSpinBox()
        self.k_spin.setRange(0, TOP_K_MAX)
        self.k_spin.setSpecialValueText("top_k")
        self.k_spin.setToolTip("Results per query for both A and B (top_k: the settings' own, which must agree)")
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("impact-run")
        self.run_button.clicked.connect(lambda _checked=False: self.start())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.slot.cancel)
        top = QHBoxLayout()  # the query file on a row of its own: beside the choices, its name pushed
        top.addWidget(self.file_button)  # Cancel off a 1280×720 window's Impact dock
        top.addWidget(self.set_button)
        top.addWidget(self.file_label, 1)
        choices = QHBoxLayout()
        for widget in (QLabel("A"), self.a_choice, QLabel("B"), self.b_choice, QLabel("k"), self.k_spin,
                       self.run_button, self.cancel_button):
            choices.addWidget(widget)
        choices.addStretch(1)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.totals = QLabel(NOT_RUN)
        self.totals.setObjectName("impact-totals")
        self.totals.setWordWrap(True)
        self.totals.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stale = QLabel("")
        self.stale.setObjectName("impact-stale")
        self.stale.setStyleSheet("color: #b35c00;")
        self.stale.setVisible(False)
        self.model = ImpactModel(self)
        self.table = make_table(self.model, sortable=True, stretch=QUERY)
        self.table.setObjectName("impact-table")
        self.table.setToolTip("Double-click a query: open it with A as the baseline and B as the settings")
        self.table.doubleClicked.connect(self._open)
        fit_columns(self.table, {0: 8, 2: 9, 3: 6, 4: 7, 5: 12, 6: 12, 7: 18})
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(choices)
        layout.addWidget(self.progress)
        layout.addWidget(self.stale)
        layout.addWidget(self.totals)
        layout.addWidget(self.table, 1)

    # ---- choices
    def _ask_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window(), "Queries", str(Path.home()),
                                              "Queries (*.tsv *.txt *.jsonl *.json);;All files (*)")
        if path:
            self.set_queries(path)

    def use_question_set(self) -> bool:
        """The open store's question set as the queries (`QuestionSets.path`)."""
        path = self.ctx.question_sets.path
        if path is None:
            self.ctx.report_error(MemsenseError("the open store has no question set: choose one (Questions…) or a "
                                                "query file"), "Impact")
            return False
        return self.set_queries(path)

    def set_queries(self, path: str | Path) -> bool:
        """Read a query file (a bad one is reported, the previous one kept)."""
        try:
            queries = read_queries(str(path))
        except MemsenseError as exc:
            self.ctx.report_error(exc, "Reading the queries")
            return False
        self.queries_path, self.queries = Path(path), queries
        users = len({q.user_id for q in queries})
        self.file_label.setText(f"{self.queries_path.name}: {len(queries)} queries, {users} users")
        self._check_stale()
        return True

    def _choices(self) -> ImpactRun:
        if self.queries_path is None:
            raise MemsenseError("choose a query file first (Queries…): USER<TAB>QUERY a line, or JSON Lines")
        a, b = self.a_choice.resolve(), self.b_choice.resolve()
        k = self.k_spin.value()
        if k:
            a, b = (a[0], replace(a[1], top_k=k)), (b[0], replace(b[1], top_k=k))
        elif a[1].top_k != b[1].top_k:
            raise MemsenseError(f"A returns top {a[1].top_k} and B top {b[1].top_k}: set k so both return as many")
        return ImpactRun(self.queries_path, a, b, self.ctx.location or "")

    # ---- running
    def start(self) -> Task | None:
        """Recall every query once and rank it under A and B (a running impact is cancelled first)."""
        try:
            run = self._choices()
            workspace = self.ctx.open_workspace()
            unknown = sorted({q.user_id for q in self.queries} - set(self.ctx.users))
            if unknown:
                raise MemsenseError(f"the store has no user {', '.join(unknown[:5])}: the queries name users of "
                                    "another store; open that store or choose another query file")
        except Exception as exc:  # noqa: BLE001 - a bad choice is one dialog line
            self.ctx.report_error(exc, "Impact")
            return None
        self._pending = run
        self.progress.setVisible(True)
        self.progress.setRange(0, len(self.queries))
        self.cancel_button.setEnabled(True)
        return self.slot.start("impact", run_jobs.impact_job, workspace, list(self.queries), run.a[1], run.b[1])

    def _progressed(self, done: int, total: int, what: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{what} %v/%m")

    def _finished(self, impact: Impact) -> None:
        self._stop()
        self.impact, self.run_with = impact, self._pending
        self.model.set_impact(impact)
        self.totals.setText(totals_text(impact, self.run_with))
        self._check_stale()
        self.impact_finished.emit(impact)

    def _failed(self, exc: BaseException) -> None:
        self._stop()
        self.ctx.report_error(exc, "Impact")

    def _cancelled(self, _exc: BaseException) -> None:
        self._stop()
        if self.impact is None:
            self.totals.setText(f"Impact {self.slot.why or 'cancelled'}. " + NOT_RUN)

    def _store_changed(self, _location: str) -> None:
        """A run on the store closed stops (its engine is gone), saying why."""
        self.slot.cancel("stopped: another store was opened")

    def _stop(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)

    def shutdown(self) -> None:
        self.slot.cancel()
        self.runner.shutdown(wait=False)

    # ---- stale figures, opening a query
    def _check_stale(self, *_: Any) -> None:
        """The figures on screen no longer answer the choices: say what changed."""
        ran = self.run_with
        if ran is None:
            return
        try:
            now = self._choices()
        except Exception:  # noqa: BLE001 - a choice that cannot be read now is a change too
            now = None
        why = [] if now is not None and now.queries == ran.queries else ["the query file"]
        if now is not None:
            why += [w for w, same in (("A", now.a == ran.a), ("B", now.b == ran.b),
                                      ("the store", now.location == ran.location)) if not same]
        self.stale.setText(f"Stale: {', '.join(why)} changed since these figures; Run again." if why else "")
        self.stale.setVisible(bool(why))

    @property
    def is_stale(self) -> bool:
        return self.stale.isVisibleTo(self)

    def _open(self, index: QModelIndex | QPersistentModelIndex) -> None:
        if self.run_with is None:
            return
        proxy = self.table.model()
        source = proxy.mapToSource(index) if isinstance(proxy, QSortFilterProxyModel) else index
        q = self.model.query_at(source.row())
        self.query_opened.emit(self.run_with, q.user_id, q.query)


def totals_text(impact: Impact, run: ImpactRun | None) -> str:
    """The totals of SPEC §14 as core gives them (`Impact.totals`)."""
    t = impact.totals(most=5)
    k = impact.k
    names = f"A = {run.a[0]}, B = {run.b[0]}: " if run is not None else ""
    lines = [f"{names}{t['queries']} queries, k = {k}. Top {k} changed: set {t['changed_set']:.1%}, "
             f"order {t['changed_order']:.1%}; mean overlap@{k} {t[f'mean_overlap@{k}']:.3f}, "
             f"mean RBO (p = 0.9) {t['mean_rbo']:.3f}."]
    for label, key in (("Entered most", "entered_most"), ("Left most", "left_most")):
        if t[key]:
            lines.append(f"{label}: " + ", ".join(f"{m} ({n})" for m, n in t[key]))
    return "\n".join(lines)
