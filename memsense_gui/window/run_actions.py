"""The Impact and History views and File > Export report…, joined to the window.

- Impact: a double-clicked query opens in the main view with A pinned as the baseline and B as
  the current settings (one undo step, `window.applying.apply_now`).
- History: every evaluation and auto-tune run the app makes is kept beside the store
  (`ctx.runs`), and the view lists them; "Re-open settings" offers a run's config with its diff
  and rank movement (`window.applying.offer`), applied as one undo step.
- Export report: A and B (the baseline and the current settings by default) on the window's
  question set, written as one HTML file by the one output writer, on a task runner with progress.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.fix import HARMFUL_MARK
from core.evaluation.history import Run
from core.files import check_output
from memsense_gui.state.context import AppContext
from memsense_gui.state.question_set import TUNE_START
from memsense_gui.views.dialogs import ProgressDialog, ProgressOwner
from memsense_gui.views.dock import DockId
from memsense_gui.views.evaluation import EvaluationView
from memsense_gui.state.evaluation_source import EvaluationSource
from memsense_gui.views.history import HistoryView
from memsense_gui.views.impact import ImpactRun, ImpactView
from memsense_gui.views.report_dialog import ReportDialog
from memsense_gui.window.evaluation import EvaluationUi
from memsense_gui.window.menus import Menus
from memsense_gui.workers import run_jobs
from memsense_gui.workers.runner import Task, TaskRunner
from memsense_gui.workers.slot import TaskSlot


class RunsUi(EvaluationUi, Protocol):
    @property
    def menus(self) -> Menus: ...


@dataclass
class RunViews:
    impact: ImpactView
    history: HistoryView
    actions: RunActions


def install_runs(window: RunsUi, evaluation: EvaluationView | None = None) -> RunViews:
    """Add Impact and History as docks and File > Export report…; keep the runs of `evaluation`
    (and of its auto-tuner) in the store's history."""
    ctx = window.ctx
    actions = RunActions(ctx, window, evaluation.source if evaluation is not None else None)
    impact, history = ImpactView(ctx), HistoryView(ctx)
    window.add_view(DockId.IMPACT, impact)
    window.add_view(DockId.HISTORY, history)
    shown = window.dock(DockId.EVALUATION)
    if shown is not None:  # the two join as tabs behind the Evaluation view, which stays in front
        shown.raise_()
    impact.query_opened.connect(actions.open_impact_query)
    history.reopen_requested.connect(actions.reopen)
    history.comparison.question_opened.connect(actions.open_run_question)
    ctx.closing.connect(history.comparison.shutdown)
    ctx.runs.failed.connect(lambda text: window.statusBar().showMessage(f"Warning: {text}", 10000))
    ctx.runs.changed_elsewhere.connect(lambda text: window.statusBar().showMessage(text, 10000))
    if evaluation is not None:
        evaluation.evaluation_finished.connect(actions.record_evaluation)
        if evaluation.autotune is not None:
            evaluation.autotune.tuning_finished.connect(actions.record_tune)
    menu = window.menus.file
    action = QAction("Export &report…", window.window())
    action.setStatusTip("A against B on the question set as one self-contained HTML file")
    action.triggered.connect(lambda *_: actions.ask_export_report())
    separators = [a for a in menu.actions() if a.isSeparator()]
    menu.insertAction(separators[-1], action)  # with the exports, above Quit
    actions.report_action = action
    if ctx.location:
        history.refresh()
    return RunViews(impact, history, actions)


class RunActions(ProgressOwner):
    """Open an impact query, re-open a run's settings, keep runs, export the report."""

    def __init__(self, ctx: AppContext, window: RunsUi, source: EvaluationSource | None):
        self.ctx = ctx
        self.window = window
        self.source = source or ctx.evaluation
        self.report_action: QAction | None = None
        self.runner = TaskRunner("memsense-report", window.window())
        self.report_slot = TaskSlot(self.runner, succeeded=self._report_written, failed=self._report_failed,
                                    cancelled=self._report_cancelled)
        self._report_path = ""
        ctx.closing.connect(lambda: self.runner.shutdown(wait=False))

    # ---- settings from elsewhere
    def open_impact_query(self, run: ImpactRun, user_id: str, query: str) -> Task | None:
        """The query in the main view: A pinned as the baseline, B as the current settings."""
        (name_a, cfg_a), (name_b, cfg_b) = run.a, run.b
        if cfg_b != self.ctx.current.config:
            self.window.applying.apply_now(cfg_b, f"impact B ({name_b})")
        self.ctx.session.pin_baseline(f"impact A ({name_a})", cfg_a)
        return self.window.queries.open_question(user_id, query)

    def open_run_question(self, user_id: str, query: str, cfg: Config, what: str) -> Task | None:
        """A question of a run comparison in the main view, under that run's settings (one undo step)."""
        if cfg != self.ctx.current.config:
            self.window.applying.apply_now(cfg, what)
        return self.window.queries.open_question(user_id, query)

    def reopen(self, run: Run, name: str) -> QWidget | None:
        """Offer the settings `name` of `run` with their diff and rank movement; Apply is one undo step."""
        try:
            cfg = run.config(name)
        except Exception as exc:  # noqa: BLE001 - settings kept by another version that no longer load
            self.ctx.report_error(exc, "Re-opening settings")
            return None
        if name.endswith(HARMFUL_MARK) and not self.confirm_harmful(run, name):
            return None
        return self.window.applying.offer(cfg, f"settings of run {run.id} ({name})")

    def confirm_harmful(self, run: Run, name: str) -> bool:
        """Ask before re-opening a fix candidate that was harmful when found (SPEC §16), naming the loss."""
        metric, start = str(run.summary.get("metric", "")), next(iter(run.configs), "")
        before, after = run.mean(metric, start), run.mean(metric, name)
        loss = "" if before is None or after is None else \
            f" ({metric} over every question {before:.3f} → {after:.3f})"
        answer = QMessageBox.warning(
            self.window.window(), "Re-open a harmful candidate?",
            f"Run {run.id}'s {name} lowered the metric over every question when it was found{loss}.\n\n"
            "Re-open its settings anyway?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    # ---- keeping runs
    def record_evaluation(self, results: list) -> Task | None:
        """An Evaluation view run: every preset's per-question figures."""
        if not results:
            return None
        source, dataset = self.source, self.source.question_file()
        return self.ctx.runs.record("eval", lambda task: source.keep_evaluation(results, dataset))

    def record_tune(self, result: Any) -> Task | None:
        """An auto-tune run (a split or a cross-validation): the start and the tuned settings scored
        on every question of the set, as `memsense tune` keeps them."""
        if result.cancelled:
            return None
        if hasattr(result, "folds"):  # a CrossValidation
            configs = {"memsense": TUNE_START, **({"offered": result.best} if result.best is not None else {})}
        else:
            configs = {"memsense": TUNE_START, "tuned": result.best.config}
        source = self.source
        return self.ctx.runs.record("tune", lambda task: source.keep_tune(configs, result, task.report,
                                                                          task.cancel_event))

    # ---- the report
    def ask_export_report(self) -> ReportDialog:
        dialog = ReportDialog(self.ctx, self.source.label(), self.window.window())
        dialog.accepted.connect(lambda: self.export_report(dialog.path(), dialog.a_choice.resolve(),
                                                           dialog.b_choice.resolve(), dialog.k_spin.value()))
        dialog.open()
        return dialog

    def export_report(self, path: str, a: tuple[str, Config], b: tuple[str, Config], k: int) -> Task | None:
        """Write the report of A and B on the question set to `path` (checked before any work)."""
        try:
            check_output(path, "report", (".html", ".htm"))
            if self.ctx.engine is None or not self.ctx.location:
                raise MemsenseError("open a store first (File > Open store…)")
            self.source.question_file()
        except MemsenseError as exc:
            self.ctx.report_error(exc, "Exporting the report")
            return None
        self.progress = progress = ProgressDialog("Writing the report", self.window.window())
        self._report_path = path
        task = self.report_slot.start("report", run_jobs.report_job, self.source.report, a, b, k, path)
        task.progressed.connect(progress.report)
        progress.canceled.connect(task.cancel)
        progress.show()
        return task

    def _report_written(self, size: int) -> None:
        self._close_progress()
        self.window.statusBar().showMessage(f"Wrote the report {self._report_path} ({size / 1024:.0f} KB)", 10000)

    def _report_failed(self, exc: BaseException) -> None:
        self._close_progress()
        self.ctx.report_error(exc, "Exporting the report")

    def _report_cancelled(self, _exc: BaseException) -> None:
        self._close_progress()
        self.window.statusBar().showMessage("Report cancelled: nothing written", 6000)


def report_dialogs(window: Any) -> list[ReportDialog]:
    """The open Export report dialogs of `window` (for tests and screenshots)."""
    return [d for d in window.findChildren(QDialog) if isinstance(d, ReportDialog) and d.isVisible()]

