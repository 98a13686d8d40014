"""The case list's work: load the judged questions and their pools, score them under the
current settings after every change, open a case in the inspector.

Questions are the window's question set, shared with the Evaluation view (the demo questions by
default); their pools are its one recall (`state.question_set`), and every settings change
re-scores them on the case list's own thread, newest change winning; settings that need deeper
route lists than the pools hold recall deeper the questions that need it, first. Cases
load when their dock is first shown on a store; a question file whose users are not in the
store says so in the panel instead of interrupting with a dialog.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.errors import MemsenseError
from core.evaluation.workspace import QuestionSetRecall
from memsense_gui.state.context import AppContext
from memsense_gui.views.dock import DockId
from memsense_gui.views.file_dialogs import ask_questions
from memsense_gui.window.parts import CasesUi
from memsense_gui.workers import jobs
from memsense_gui.workers.runner import TaskRunner
from memsense_gui.workers.slot import TaskSlot

class CasesActions:
    def __init__(self, ctx: AppContext, window: CasesUi):
        self.window = window
        self.ctx = ctx
        self.panel = window.cases_panel
        self.source = ctx.evaluation
        self.runner = TaskRunner("memsense-cases", window.window())
        self.load_slot = TaskSlot(self.runner, succeeded=self._loaded, failed=self._load_failed,
                                  progressed=self._progress)
        self.score_slot = TaskSlot(self.runner, succeeded=self._scored,
                                   failed=lambda exc: self.ctx.report_error(exc, "Cases"))
        self.loaded_for: str | None = None
        self.questions: list = []
        self.pools: dict = {}
        self.depth = 0  # how deep every pool's route lists are

    def connect(self) -> None:
        ctx = self.ctx
        self.panel.source_requested.connect(self.choose_questions)
        self.panel.case_opened.connect(self.window.queries.open_question)
        ctx.users_loaded.connect(lambda _users: self._maybe_load(self.window.showing(DockId.CASES)))
        dock = self.window.dock(DockId.CASES)
        if dock is not None:
            dock.visibilityChanged.connect(self._maybe_load)
        ctx.current.changed.connect(lambda _cfg: self.score())
        ctx.closing.connect(lambda: self.runner.shutdown(wait=True))
        self.source.changed.connect(self._questions_changed)
        self.panel.set_source(self.source.label())

    def _questions_changed(self, label: str) -> None:
        """Other questions chosen (here or in the Evaluation view): load them when shown."""
        self.panel.set_source(label)
        self.loaded_for = None
        self._maybe_load(self.window.showing(DockId.CASES))

    def _maybe_load(self, shown: bool) -> None:
        """Load the cases of a newly opened store once the Cases dock is on screen."""
        if shown and self.ctx.location and self.loaded_for != self.ctx.location:
            self.load()

    def load(self) -> None:
        """Take the question set's pools, deep enough for the current settings (recalled on the
        engine thread when no view recalled them yet), then score them."""
        if self.ctx.engine is None:
            return
        self.loaded_for = self.ctx.location
        self.panel.set_source(f"{self.source.label()} — recalling…")
        self.load_slot.start("cases", jobs.case_pools, self.source, self.ctx.current.config.route_limit)

    def choose_questions(self) -> None:
        path = ask_questions(self.window.window(), self.ctx.settings, self.source.path)
        if path:  # a file that is not a question set is refused in one dialog; the set stays
            self.ctx.attempt(lambda: self.source.set_path(Path(path)), "Choosing questions")  # loaded by `_questions_changed`

    def _progress(self, done: int, total: int, what: str) -> None:
        self.panel.set_source(f"{self.source.label()} — {what} {done}/{total}")

    def _loaded(self, result: QuestionSetRecall) -> None:
        self.questions, self.pools, self.depth = list(result.questions), dict(result.pools), result.depth
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
        if self.questions and self.ctx.current.config.route_limit > self.depth:
            self.load()  # deeper lists for the questions whose pools end before them, then scored
        elif self.questions:
            self.score_slot.start("score cases", jobs.score_cases, self.pools, self.questions, self.ctx.current.config)

    def _scored(self, result: tuple[list, Any]) -> None:
        outcomes, metric = result
        self.panel.set_outcomes(outcomes, metric)
