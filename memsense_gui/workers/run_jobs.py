"""Background jobs of the Impact view and the report (no Qt; run by `workers.runner.TaskRunner`).

Both run over the store's workspace (`core.evaluation.workspace`), whose recalls run on the engine
runner's thread, one call at a time (`AppContext.open_workspace`).
"""
from __future__ import annotations

from typing import Callable, Sequence

from core.atomic import write_text_atomic
from core.config import Config
from core.evaluation import workspace_runs as runs
from core.evaluation.impact import Impact, Query
from core.evaluation.workspace import Workspace
from memsense_gui.workers.runner import Job

Progress = Callable[[int, int, str], None]


def impact_job(workspace: Workspace, queries: Sequence[Query], cfg_a: Config, cfg_b: Config, task: Job) -> Impact:
    """Each query recalled once, ranked under A and B (`core.evaluation.workspace_runs.impact`)."""
    return runs.impact(workspace, queries, cfg_a, cfg_b, progress=task.report, cancel=task.cancel_event)


def report_job(report: Callable[..., str], a: tuple[str, Config], b: tuple[str, Config], k: int, path: str,
               task: Job) -> int:
    """The report of A and B on the question set (`core.evaluation.workspace_runs.report`: the store's workspace,
    pools recalled before re-ranked), written through the one output writer; the number of bytes written."""
    page = report(a, b, k, task.report, task.cancel_event)
    task.report(0, 1, "writing the report")
    task.check()
    write_text_atomic(path, page)
    return len(page.encode())
