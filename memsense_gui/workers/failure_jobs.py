"""The Diagnose and Find-a-fix jobs: module-level functions, no Qt, run by `workers.runner.TaskRunner`.

Both run on the window's question set (`state.evaluation_source.EvaluationSource`: the store's workspace,
whose pools recalled before are reused, never recalled again): `core.evaluation.workspace_runs.diagnose`
and `.fix` re-rank them and keep the run in the store's history (a re-diagnosis that follows the settings
is not kept); a history that cannot be written is a note beside the result (`DiagnoseRun.history_note`),
not a failure.
"""
from __future__ import annotations

import threading
from typing import Callable, Protocol, Sequence

from core.config import Config
from core.evaluation.workspace import pools_at
from core.evaluation.workspace_runs import NOT_KEPT, DiagnoseRun, FixRun
from memsense_gui.workers.runner import Job

__all__ = ["NOT_KEPT", "DiagnoseRun", "FixRun", "QuestionSource", "diagnose_set", "find_fix", "pools_at"]

Progress = Callable[[int, int, str], None]


class QuestionSource(Protocol):
    """The window's question set, diagnosed or searched on its store's workspace."""

    def diagnose(self, cfg: Config, keep: bool, progress: Progress, cancel: threading.Event) -> DiagnoseRun: ...

    def find_fix(self, start: Config, cases: Sequence[str], trials: int, seed: int, jobs: int, progress: Progress,
                 cancel: threading.Event) -> FixRun: ...


def diagnose_set(source: QuestionSource, cfg: Config, keep: bool, task: Job) -> DiagnoseRun:
    """Where each gold session of the question set is lost under `cfg` (SPEC §13), kept in the history
    with `keep`."""
    run = source.diagnose(cfg, keep, task.report, task.cancel_event)
    task.check()
    return run


def find_fix(source: QuestionSource, start: Config, cases: Sequence[str], trials: int, seed: int, jobs: int,
             task: Job) -> FixRun:
    """Configs that win `cases` back from `start` (`core.evaluation.fix.find_fixes`), every figure
    re-ranked on every question; a cancelled search returns what it found so far."""
    return source.find_fix(start, cases, trials, seed, jobs, task.report, task.cancel_event)
