""""What would it take" for the pin shown in the Why not? panel, worked out off the GUI thread.

Each answer is about forty knob searches, each a handful of real re-ranks of the cached pool
(a second or two): it runs on its own thread, newest request wins, and a slider tick that
re-ranks asks again for the pin on screen.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

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

    def connect(self) -> None:
        self.panel.whatif_wanted.connect(self.request)
        self.ctx.closing.connect(lambda: self.runner.shutdown(wait=True))

    def request(self, memory_id: str) -> None:
        session, panel = self.ctx.session, self.panel
        if session.pool is None:
            return
        panel.whatif_pending(memory_id)
        self.slot.start("what would it take", jobs.what_it_takes, session.pool, session.config, memory_id)

    def _done(self, result: tuple[str, Any]) -> None:
        memory_id, answer = result
        self.panel.show_whatif(memory_id, answer)
