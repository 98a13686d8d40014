"""The Evaluation view's "current settings" row follows the settings on screen.

An evaluation scores every preset and the settings on screen as they were when it ran. When the
settings change afterwards, that row is marked stale at once (in the table and the status line)
and scored again under the new settings on the view's worker thread: the question set's pools
are already recalled, so this is a re-rank of each question, not a new recall. The newest
settings win. While the row is stale, exporting the evaluation (table, plot or a settings file's
evaluated figure) is refused with a line that says to wait (`check_fresh`).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Protocol, Sequence

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.evaluate import PresetEvaluation
from core.evaluation.workspace import CURRENT
from memsense_gui.models.evaluation import PresetMetricsModel
from memsense_gui.workers.runner import Job, TaskRunner
from memsense_gui.workers.slot import TaskSlot

STALE_NOTE = "re-scoring the current settings row for the settings on screen…"

EvaluateFn = Callable[[Mapping[str, Config], int, Callable[[int, int, str], None], threading.Event],
                      Sequence[PresetEvaluation]]


class Shown(Protocol):
    """What of the Evaluation view the row needs."""

    results: list[PresetEvaluation]
    evaluate_fn: EvaluateFn | None
    runner: TaskRunner
    metrics_model: PresetMetricsModel
    status: QLabel

    def set_results(self, results: Sequence[PresetEvaluation]) -> None: ...


class CurrentRow(QObject):
    """Keeps the view's `CURRENT` row scored under `settings()` (module docstring)."""

    def __init__(self, view: Shown, settings: Callable[[], Config], parent: QObject | None = None):
        super().__init__(parent)
        self.view = view
        self.settings = settings
        self.slot = TaskSlot(view.runner, succeeded=self._scored, failed=self._failed, cancelled=self._failed)
        self.pending: Config | None = None  # the settings being scored

    def row(self) -> PresetEvaluation | None:
        return next((r for r in self.view.results if r.preset == CURRENT), None)

    @property
    def stale(self) -> bool:
        """The view shows a current settings row scored under other settings than those on screen."""
        row = self.row()
        return row is not None and row.config != self.settings()

    def check(self, *_: Any) -> None:
        """After a settings change or an evaluation: score the row again if it is stale."""
        cfg = self.settings()
        if not self.stale:
            self.slot.cancel()
            self.pending = None
            self.view.metrics_model.set_stale(())
            return
        self.view.metrics_model.set_stale((CURRENT,))
        self.view.status.setText(STALE_NOTE)
        evaluate, row = self.view.evaluate_fn, self.row()
        if evaluate is None or row is None or cfg == self.pending:
            return
        self.pending = cfg
        self.slot.start("score current settings", _score, evaluate, cfg, row.k)

    def _scored(self, results: Sequence[PresetEvaluation]) -> None:
        self.pending = None
        new = next((r for r in results if r.preset == CURRENT), None)
        if new is None or new.config != self.settings() or self.row() is None:
            self.check()  # the settings moved on meanwhile (or the evaluation was replaced)
            return
        self.view.set_results([new if r.preset == CURRENT else r for r in self.view.results])
        self.check()

    def _failed(self, exc: BaseException) -> None:
        self.pending = None
        if self.stale:
            self.view.status.setText(f"The current settings row is stale: scoring it failed ({exc}); "
                                     "press Evaluate")

    def check_fresh(self) -> None:
        """Raise when the shown current settings row was scored under other settings."""
        if self.stale:
            raise MemsenseError("the evaluation's current settings row is being scored again for the settings "
                                "on screen; export again in a moment (or press Evaluate)")


def _score(evaluate: EvaluateFn, cfg: Config, k: int, task: Job) -> list[PresetEvaluation]:
    """Worker thread: the current settings alone on the question set's pools (a re-rank)."""
    results = list(evaluate({CURRENT: cfg}, k, task.report, task.cancel_event))
    task.check()
    return results
