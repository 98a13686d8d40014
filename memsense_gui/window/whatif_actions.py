""""What would it take" for the pin shown in the Why not? panel, worked out off the GUI thread.

Each answer is about forty knob searches, each a handful of real re-ranks of the cached pool
(a second or two): it runs on its own thread, newest request wins, and a slider tick that
re-ranks asks again for the pin on screen. With a question set chosen, the changes found are then
judged on it (SPEC §16): each re-ranked on every question, harmful ones marked and listed last.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

from core.errors import MemsenseError
from core.rank.whatif import WhatIf, apply_change
from memsense_gui.state.context import AppContext
from memsense_gui.views.why_not import WhyNotPanel
from memsense_gui.workers import jobs
from memsense_gui.workers.runner import TaskRunner
from memsense_gui.workers.slot import TaskSlot


class WhatIfActions:
    def __init__(self, ctx: AppContext, panel: WhyNotPanel, parent: QObject):
        self.panel = panel
        self.ctx = ctx
        self.runner = TaskRunner("memsense-whatif", parent)
        self.slot = TaskSlot(self.runner, succeeded=self._done,
                             failed=lambda exc: self.ctx.report_error(exc, "What would it take"))
        self.source = ctx.evaluation
        self.judging: str | None = None  # the pin whose changes are being judged on the question set
        self.closed = False
        self.judge_runner = TaskRunner("memsense-whatif-set", parent)
        self.judge_slot = TaskSlot(self.judge_runner, succeeded=self._judged, failed=self._judge_failed,
                                   cancelled=lambda _exc: None)

    def connect(self) -> None:
        self.panel.whatif_wanted.connect(self.request)
        self.ctx.closing.connect(lambda: self.runner.shutdown(wait=True))
        self.ctx.closing.connect(self._close)

    def _close(self) -> None:
        self.closed = True  # an answer arriving after this is judged no more
        self.judge_runner.shutdown(wait=False)

    def request(self, memory_id: str) -> None:
        session, panel = self.ctx.session, self.panel
        if session.pool is None:
            return
        panel.whatif_pending(memory_id)
        self.judge_slot.cancel()
        self.slot.start("what would it take", jobs.what_it_takes, session.pool, self.ctx.current.config, memory_id)

    def _done(self, result: tuple[str, Any]) -> None:
        memory_id, answer = result
        self.panel.show_whatif(memory_id, answer)
        self.judge(memory_id, answer)

    def judge(self, memory_id: str, answer: WhatIf) -> None:
        """Judge the changes found on the chosen question set, when one is chosen."""
        if not answer.changes or self.closed:
            return
        if self.source.path is None and not self.source.app_judged:
            self.panel.effects_note(memory_id, "Choose a question set (Cases) to judge each change on it.")
            return
        cfg = self.ctx.current.config
        configs = [apply_change(cfg, c.knob, c.value) for c in answer.changes]
        self.judging = memory_id
        self.judge_slot.start("judge on the question set", jobs.judge_on_set, self.source, cfg, configs)

    def _judged(self, result: tuple[list, int, str]) -> None:
        effects, questions, metric = result
        if self.judging is not None:
            self.panel.show_effects(self.judging, effects, questions, metric)

    def _judge_failed(self, exc: BaseException) -> None:
        if self.judging is None:
            return
        if isinstance(exc, MemsenseError):
            self.panel.effects_note(self.judging, f"Not judged on the question set: {exc}")
        else:
            self.ctx.report_error(exc, "Judging on the question set")
