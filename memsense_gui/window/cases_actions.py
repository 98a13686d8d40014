"""The case list's work: load the judged questions and their pools, score them under the
current settings after every change, open a case in the inspector.

Questions come from the same kinds of file as the Evaluation view (the demo questions by
default); pools are recalled once per question (through the engine thread) and every
settings change re-scores them on the case list's own thread, newest change winning. Cases
load when their dock is first shown on a store; a question file whose users are not in the
store says so in the panel instead of interrupting with a dialog.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.evaluate import recall_depth
from memsense_gui.state.context import AppContext
from memsense_gui.views.dock import DockId
from memsense_gui.views.evaluation_source import EvaluationSource
from memsense_gui.window.parts import CasesUi
from memsense_gui.workers import jobs
from memsense_gui.workers.runner import TaskRunner
from memsense_gui.workers.slot import TaskSlot

DEPTH_FOR = Config(top_k=50)
"""Pools are recalled as deep as the largest top_k the controls allow, so no slider needs more."""


class CasesActions:
    def __init__(self, ctx: AppContext, window: CasesUi):
        self.window = window
        self.ctx = ctx
        self.panel = window.cases_panel
        self.source = EvaluationSource(ctx, window.window())
        self.runner = TaskRunner("memsense-cases", window.window())
        self.load_slot = TaskSlot(self.runner, succeeded=self._loaded, failed=self._load_failed,
                                  progressed=self._progress)
        self.score_slot = TaskSlot(self.runner, succeeded=self._scored,
                                   failed=lambda exc: self.ctx.report_error(exc, "Cases"))
        self.loaded_for: str | None = None
        self.questions: list = []
        self.pools: dict = {}

    def connect(self) -> None:
        ctx = self.ctx
        self.panel.source_requested.connect(self.choose_questions)
        self.panel.case_opened.connect(self.window.queries.open_question)
        ctx.users_loaded.connect(lambda _users: self._maybe_load(self.window.showing(DockId.CASES)))
        dock = self.window.dock(DockId.CASES)
        if dock is not None:
            dock.visibilityChanged.connect(self._maybe_load)
        ctx.session.config_changed.connect(lambda _cfg: self.score())
        ctx.closing.connect(lambda: self.runner.shutdown(wait=True))
        self.panel.set_source(self.source.label())

    def _maybe_load(self, shown: bool) -> None:
        """Load the cases of a newly opened store once the Cases dock is on screen."""
        if shown and self.ctx.location and self.loaded_for != self.ctx.location:
            self.load()

    def load(self) -> None:
        """Recall every question's pool (on the engine thread), then score them."""
        if self.ctx.engine is None:
            return
        self.loaded_for = self.ctx.location
        self.panel.set_source(f"{self.source.label()} — recalling…")
        self.load_slot.start("cases", jobs.case_pools, self.source, recall_depth([DEPTH_FOR]))

    def choose_questions(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window.window(), "Judged questions", str(self.source.path or ""),
                                              "Questions (*.json *.jsonl);;All files (*)")
        if path:
            self.source.set_path(Path(path))
            self.load()

    def _progress(self, done: int, total: int, what: str) -> None:
        self.panel.set_source(f"{self.source.label()} — {what} {done}/{total}")

    def _loaded(self, result: tuple[list, dict]) -> None:
        self.questions, self.pools = result
        self.panel.set_source(f"{self.source.label()} ({len(self.questions)} judged)")
        self.panel.set_cases(self.questions, self.pools)
        self.score()

    def _load_failed(self, exc: BaseException) -> None:
        if isinstance(exc, MemsenseError):  # e.g. the question file is about other users: say so here
            self.panel.set_source(f"{self.source.label()}: {exc}")
            self.panel.set_cases([], {})
        else:
            self.ctx.report_error(exc, "Cases")

    def evidence_for(self, user_id: str, text: str) -> tuple[str, ...]:
        """The evidence turns of the loaded case asking `text` of `user_id` (none: not a case)."""
        key = " ".join(text.split()).casefold()
        return next((q.gold_turns for q in self.questions
                     if q.user_id == user_id and " ".join(q.text.split()).casefold() == key), ())

    def score(self) -> None:
        if self.questions:
            self.score_slot.start("score cases", jobs.score_cases, self.pools, self.questions, self.ctx.session.config)

    def _scored(self, result: tuple[list, Any]) -> None:
        outcomes, metric = result
        self.panel.set_outcomes(outcomes, metric)
