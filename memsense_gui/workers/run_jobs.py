"""Background jobs of the Impact view and the report (no Qt; run by `workers.runner.TaskRunner`).

The store's engine is used only on the engine runner's thread: these jobs run on their own
runner and reach the engine through an `EngineBridge`, one call at a time.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from core.atomic import write_text_atomic
from core.config import Config
from core.evaluation.history import store_label
from core.evaluation.impact import Impact, Query, impact
from core.evaluation.question_set import QuestionSetRecall, planned_depth
from core.evaluation.report import report, report_configs
from core.records import Question
from memsense_gui.workers.bridge import EngineBridge
from memsense_gui.workers.runner import Job

Progress = Callable[[int, int, str], None]
QuestionSet = Callable[[int, Progress, Any], QuestionSetRecall]
"""(depth, progress, cancel event) -> the question set's recall, each pool at least depth deep."""


def model_of(location: str, hint: str) -> str:
    """The model that embedded the store: its meta's key when the store names one (a folder, a
    Qdrant server), else what the engine calls it (a live Memsense's database is not reopened)."""
    from core.evaluation.history import model_key

    try:
        return model_key(location)
    except Exception:  # noqa: BLE001 - a store that cannot be reopened for its meta keeps the hint
        return hint or "unknown"


def impact_job(bridge: EngineBridge, engine: Any, queries: Sequence[Query], cfg_a: Config, cfg_b: Config,
               task: Job) -> Impact:
    """Each query recalled once on the engine thread, ranked under A and B (`core.evaluation.impact`)."""
    def recall(user_id: str, text: str, depth: int) -> Any:
        return bridge.call(engine.recall, user_id, text, depth, cancel=task.cancel_event)

    return impact(recall, queries, cfg_a, cfg_b, progress=task.report, cancelled=lambda: task.cancelled)


def report_job(bridge: EngineBridge, engine: Any, question_set: Callable[[], tuple[list[Question], str]],
               recalled: Callable[..., QuestionSetRecall], a: tuple[str, Config], b: tuple[str, Config], k: int,
               path: str, location: str, dataset: str, model_hint: str, task: Job) -> int:
    """The report of A and B on the question set (`core.evaluation.report.report`), written through
    the one output writer; the number of bytes written."""
    questions, digest = question_set()
    depth = planned_depth(report_configs(a[1], b[1], k))
    pools = recalled(questions, digest, depth, task.report, task.cancel_event).pools
    users = sorted({q.user_id for q in questions})
    chunks_of = {}
    for n, user in enumerate(users):
        task.check()
        task.report(n, len(users), f"reading {user}'s chunks")
        chunks_of[user] = tuple(bridge.call(engine.chunks, user, cancel=task.cancel_event))
    task.report(0, 1, "ranking and writing the report")
    page = report(pools, questions, a, b, k, chunks_of, store_label(location), dataset, model_of(location, model_hint))
    task.check()
    write_text_atomic(path, page)
    return len(page.encode())
