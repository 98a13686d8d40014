"""Diagnose and Find a fix as docks of the window: run them, keep them current, act on them.

Both read the window's question set (`ctx.evaluation`, an `EvaluationSource` on the store's workspace: its one
recall, never a second) and run core on their own task runners (`workers.failure_jobs`), the
newest run of each winning. Diagnose follows the current settings and questions: a change marks
the figures on screen out of date, and re-diagnoses at once while the dock is on screen (else
when it is next shown). A case opens in the main view: its question run for its user, its gold
sessions marked, and the chunk its stage was judged by pinned in "Why not?", which shows its
fate. Find a fix runs on the cases selected in Cases or Diagnose (their buttons, context menus,
Ctrl+Shift+F); Apply offers a candidate's settings through the window's one apply mechanism
(`window.applying.offer`: the settings diff and the rank movement, then one undo step). Every
run asked for is kept in the store's history by the workspace (`core.evaluation.workspace.Workspace.keep`),
as the CLI's are; a re-diagnosis that follows the settings or questions is not.
"""
from __future__ import annotations

from typing import Protocol, Sequence

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.diagnose import LostSession
from core.evaluation.fix import FixCandidate
from core.evaluation.judged import session_docid
from core.rank.ranking import Ranking
from memsense_gui.state.context import AppContext
from memsense_gui.views.cases import CasesPanel
from memsense_gui.views.diagnose import DiagnoseView
from memsense_gui.views.dock import DockId
from memsense_gui.views.fix import FixView
from memsense_gui.views.tables import select_id
from memsense_gui.views.why_not import WhyNotPanel
from memsense_gui.window.parts import QuestionOpener, SettingsApplier, Shell
from memsense_gui.workers import failure_jobs
from memsense_gui.workers.bridge import EngineBridge
from memsense_gui.workers.runner import Task, TaskRunner
from memsense_gui.workers.slot import TaskSlot

FIX_SHORTCUT = "Ctrl+Shift+F"
FIX_JOBS = 1
"""Processes of the fix search, as `memsense fix` runs it: on LoCoMo dev (760 questions, five cases,
60 trials, load average 11 on 2 cores) one took 33.5 s, two spawned workers 37.5 s, measured in one run."""
REDIAGNOSE_AFTER_MS = 300
"""A settings change re-diagnoses this long after the last tick of a slider drag."""


class FailuresUi(Shell, Protocol):
    @property
    def ctx(self) -> AppContext: ...
    @property
    def queries(self) -> QuestionOpener: ...
    @property
    def cases_panel(self) -> CasesPanel: ...
    @property
    def whynot_panel(self) -> WhyNotPanel: ...
    @property
    def applying(self) -> SettingsApplier: ...

    def menuBar(self) -> QMenuBar: ...  # noqa: N802 - Qt's name

    def addAction(self, action: QAction) -> None: ...  # noqa: N802 - Qt's name


class FailuresActions:
    def __init__(self, window: FailuresUi):
        self.window = window
        self.ctx = ctx = window.ctx
        self.source = ctx.evaluation
        self.bridge = EngineBridge(ctx.engine_runner)
        self.jobs = FIX_JOBS
        self.diagnose_view, self.fix_view = DiagnoseView(), FixView()
        self.diagnose_runner = TaskRunner("memsense-diagnose", window.window())
        self.fix_runner = TaskRunner("memsense-fix", window.window())
        v, f = self.diagnose_view, self.fix_view
        self.diagnose_slot = TaskSlot(self.diagnose_runner, succeeded=self._diagnosed, progressed=v.set_progress,
                                      failed=lambda e: self._failed(v, e, "Diagnose failed"),
                                      cancelled=lambda _e: self._diagnose_cancelled())
        self.fix_slot = TaskSlot(self.fix_runner, succeeded=self._fixed, progressed=f.set_progress,
                                 failed=lambda e: self._failed(f, e, "Find a fix failed"),
                                 cancelled=lambda _e: f.set_running(False, "Search cancelled before any trial."))
        self._fix_from: tuple[str | None, str] | None = None  # (store, questions) the running search started on
        self.timer = QTimer(window.window())
        self.timer.setSingleShot(True)
        self.timer.setInterval(REDIAGNOSE_AFTER_MS)
        self.timer.timeout.connect(self._rediagnose)
        self._pinned: str | None = None  # the chunk the last opened case pinned
        self._focus: tuple[str, str, bool] | None = None  # (query, memory id, ranked yet) whose fate to show

    # ---- wiring -----------------------------------------------------------------------------------
    def connect(self) -> None:
        ctx, v, f = self.ctx, self.diagnose_view, self.fix_view
        v.run_requested.connect(self.diagnose)
        v.cancel_requested.connect(self.diagnose_slot.cancel)
        v.case_opened.connect(self.open_case)
        v.fix_requested.connect(lambda cases: self.find_fix(cases, "Diagnose"))
        f.find_requested.connect(lambda cases, _trials: self.find_fix(cases, ""))
        f.cancel_requested.connect(self.cancel_fix)
        f.apply_requested.connect(self.apply_candidate)
        self.window.cases_panel.fix_requested.connect(lambda cases: self.find_fix(cases, "Cases"))
        ctx.current.changed.connect(self._settings_changed)
        self.source.changed.connect(lambda _label: self._elsewhere("other questions were chosen"))
        ctx.store_opened.connect(lambda _loc: self._elsewhere("another store was opened"))
        ctx.ranking_updated.connect(self._show_pinned_fate)
        ctx.closing.connect(self.shut_down)
        dock = self.window.dock(DockId.DIAGNOSE)
        if dock is not None:
            dock.visibilityChanged.connect(self._rediagnose_if_stale)

    def shut_down(self) -> None:
        self.timer.stop()
        self.diagnose_runner.shutdown(wait=False)
        self.fix_runner.shutdown(wait=False)

    def _failed(self, view: DiagnoseView | FixView, exc: BaseException, what: str) -> None:
        view.set_running(False, f"{what}: {exc}")
        view.mark_stale(f"{what.lower()}: {exc}")  # a run shown before stays, marked as the earlier one
        if not isinstance(exc, MemsenseError):  # a bug, not bad input: the dialog with its details
            self.ctx.report_error(exc, what)

    def _elsewhere(self, why: str) -> None:
        """Another store or other questions: a diagnose or a search running on the old ones stops
        (the engine they read is closed, their figures would not be of these), and what is shown
        is out of date."""
        self.diagnose_slot.cancel(why)
        self.fix_slot.cancel(why)
        self._out_of_date(why)

    def _diagnose_cancelled(self) -> None:
        why = self.diagnose_slot.why
        self.diagnose_view.set_running(False, f"Diagnose stopped: {why}." if why else "Diagnose cancelled.")
        if why:  # the status just set replaced the mark on a run shown before: mark it again
            self._out_of_date(why)

    # ---- diagnose ---------------------------------------------------------------------------------
    def diagnose(self, *, keep: bool = True) -> Task | None:
        """Diagnose the question set under the current settings (a running diagnose is replaced); the run is
        kept in the history with `keep`: the user's Diagnose keeps one, a re-diagnosis that follows the
        settings does not (each slider tick would add a run to Runs)."""
        self.timer.stop()
        if self.ctx.engine is None:
            self.diagnose_view.set_running(False, "Open a store first (File > Open store…).")
            return None
        cfg = self.ctx.current.config
        self.diagnose_view.set_running(True, f"Diagnosing {self.source.label()} under the current settings…")
        return self.diagnose_slot.start("diagnose", failure_jobs.diagnose_set, self.source, cfg, keep)

    def _diagnosed(self, run: failure_jobs.DiagnoseRun) -> None:
        self.diagnose_view.set_running(False)
        self.diagnose_view.show_run(run)
        if run.run_id is not None:
            self.ctx.run_recorded.emit(run.run_id)
        if run.config != self.ctx.current.config:
            self._settings_changed(self.ctx.current.config)

    def _settings_changed(self, cfg: Config) -> None:
        run = self.diagnose_view.run
        if run is not None and run.config != cfg:
            self._out_of_date("the settings changed since this diagnose ran", fix_too=False)
        fix = self.fix_view.run
        if fix is not None and fix.start != cfg:
            self.fix_view.mark_stale("the settings differ from those the search started from")
        elif fix is not None and self._fix_from == (self.ctx.location, self.source.label()):
            self.fix_view.mark_current()  # back to the settings it started from (an undo, say)

    def _out_of_date(self, why: str, fix_too: bool = True) -> None:
        shown = self.window.showing(DockId.DIAGNOSE)
        self.diagnose_view.mark_stale(why + ("; diagnosing again…" if shown else "; shown again, it re-diagnoses"))
        if fix_too:
            self.fix_view.mark_stale(why)
        if shown and self.diagnose_view.run is not None:
            self.timer.start()

    def _rediagnose_if_stale(self, shown: bool) -> None:
        if shown and self.diagnose_view.stale:
            self.timer.start()

    def _rediagnose(self) -> None:
        if self.diagnose_view.stale and self.window.showing(DockId.DIAGNOSE):
            self.diagnose(keep=False)

    # ---- a case in the main view -----------------------------------------------------------------
    def open_case(self, item: LostSession) -> Task | None:
        """Run the case's question for its user, gold sessions marked, and pin the chunk its stage was
        judged by: "Why not?" shows its fate (the same status as its stage, for the same settings)."""
        run = self.diagnose_view.run
        q = next((q for q in run.questions if q.question_id == item.question_id), None) if run is not None else None
        if q is None:
            return None
        if item.memory_id is not None:
            if self._pinned not in (None, item.memory_id):
                self.ctx.session.unpin(self._pinned)
            self._pinned = item.memory_id
            self.ctx.session.pin(item.memory_id)
            self._focus = (q.text, item.memory_id, False)
        self.window.raise_dock(DockId.WHY_NOT)
        gold = tuple(session_docid(q.user_id, s) for s in q.gold_sessions)
        return self.window.queries.open_question(q.user_id, q.text, gold, q.gold_turns)

    def _show_pinned_fate(self, ranking: Ranking) -> None:
        """Keep the opened case's chunk the pin "Why not?" explains, through every re-rank of its
        question (its fate may wait for the deepest lists); another question lets it go."""
        if self._focus is None:
            return
        query, memory_id, seen = self._focus
        if ranking.pool.query != query:
            if seen:  # a ranking of the query on screen before the case's own arrived is not a move away
                self._focus = None
            return
        self._focus = (query, memory_id, True)
        if self.window.whynot_panel.shown_pin() != memory_id:
            select_id(self.window.whynot_panel.pins_view, memory_id)

    # ---- find a fix --------------------------------------------------------------------------------
    def fix_selected(self) -> Task | None:
        """Ctrl+Shift+F: the cases selected in Diagnose when it has the focus or Cases has none selected."""
        diag = self.diagnose_view.selected_cases()
        cases = self.window.cases_panel.selected_cases()
        if diag and (self.diagnose_view.table.hasFocus() or not cases):
            return self.find_fix(diag, "Diagnose")
        return self.find_fix(cases, "Cases")

    def find_fix(self, cases: Sequence[str], where: str) -> Task | None:
        """Search for settings that win `cases` back from the current ones (a running search is replaced)."""
        f = self.fix_view
        if where:
            f.set_cases(cases, where)
        self.window.raise_dock(DockId.FIX)
        if not f.cases:
            f.set_running(False, "Select one or more failing cases in Cases or Diagnose first.")
            return None
        if self.ctx.engine is None:
            f.set_running(False, "Open a store first (File > Open store…).")
            return None
        start = self.ctx.current.config
        self._fix_from = (self.ctx.location, self.source.label())
        f.set_running(True, f"Searching {f.trials.value()} configs from the current settings…")
        return self.fix_slot.start("find a fix", failure_jobs.find_fix, self.source, start, f.cases,
                                   f.trials.value(), 0, self.jobs)

    def cancel_fix(self) -> None:
        self.fix_slot.cancel()
        self.fix_view.status.setText("Cancelling: the candidates found so far are verified and kept…")

    def _fixed(self, run: failure_jobs.FixRun) -> None:
        self.fix_view.set_running(False)
        self.fix_view.show_run(run)
        if run.run_id is not None:
            self.ctx.run_recorded.emit(run.run_id)
        if self._fix_from is not None and self._fix_from[0] != self.ctx.location:
            self.fix_view.mark_stale("another store was opened while it searched: these are of the store before")
        elif self._fix_from is not None and self._fix_from[1] != self.source.label():
            self.fix_view.mark_stale("other questions were chosen while it searched")
        elif run.start != self.ctx.current.config:
            self.fix_view.mark_stale("the settings differ from those the search started from")

    def apply_candidate(self, candidate: FixCandidate, number: int) -> QWidget:
        """Offer the candidate's settings with their diff and rank movement; Apply is one undo step."""
        return self.window.applying.offer(candidate.config, f"fix candidate {number}")


def install_failures(window: FailuresUi) -> FailuresActions:
    """Add the Diagnose and Find a fix docks, their menu and shortcut, on the window's context."""
    actions = FailuresActions(window)
    window.add_view(DockId.FIX, actions.fix_view)
    window.add_view(DockId.DIAGNOSE, actions.diagnose_view)
    actions.connect()
    menu = QMenu("&Diagnose", window.window())
    bar = window.menuBar()
    last = bar.actions()[-1] if bar.actions() else None  # Help stays last
    if last is not None:
        bar.insertMenu(last, menu)
    else:
        bar.addMenu(menu)
    for text, slot, shortcut in (("&Diagnose the question set", lambda: _diagnose_shown(window, actions), None),
                                 ("&Find a fix for the selected cases", actions.fix_selected, FIX_SHORTCUT)):
        action = QAction(text, window.window())
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda *_a, s=slot: s())
        menu.addAction(action)
        window.addAction(action)
    return actions


def _diagnose_shown(window: FailuresUi, actions: FailuresActions) -> None:
    window.raise_dock(DockId.DIAGNOSE)
    actions.diagnose()
