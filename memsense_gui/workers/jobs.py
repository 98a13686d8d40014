"""The app's background jobs: module-level functions, no Qt, run by `workers.runner.TaskRunner`.

Each takes its inputs plus the running task (progress callback, cancel token) and returns a
result object; `Cancelled` (core.errors) when the task was cancelled between steps.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from core.config import MAX_ROUTE_DEPTH, Config
from core.errors import MemsenseError
from core.evaluation.evaluate import Progress, QuestionOutcome, evaluate_config
from core.evaluation.judged import session_docid
from core.evaluation.metrics import metric_key
from core.evaluation.workspace import QuestionSetRecall, pools_at
from core.rank.ranking import Ranking
from core.rank.rerank import rerank
from core.evaluation.fix import FixCandidate, judge
from core.rank.whatif import WhatIf, what_would_change
from core.recall.pool import RecallPool, deepen, deepest
from core.recall.protocol import RecallEngine
from core.records import Chunk, Question
from memsense_gui.workers.runner import Job


@dataclass(frozen=True)
class OpenedStore:
    location: str
    engine: RecallEngine
    users: tuple[str, ...]


def open_store(factory: Callable[[str], RecallEngine], location: str, task: Job | None = None) -> OpenedStore:
    """Open a store and list its users (Qdrant open + scroll: fast, but never on the GUI thread)."""
    engine = factory(location)
    try:
        users = tuple(engine.users())
    except BaseException:
        engine.close()
        raise
    if not users:
        engine.close()
        raise MemsenseError(f"store {location} holds no conversations; build it again with File > New store…")
    return OpenedStore(str(location), engine, users)


def load_model(engine: RecallEngine, task: Job | None = None) -> None:
    """Load the embedding model (several seconds on first use)."""
    engine.load_model()


def user_chunks(engine: RecallEngine, user_id: str, task: Job | None = None) -> tuple[str, tuple[Chunk, ...]]:
    return user_id, tuple(engine.chunks(user_id))


@dataclass(frozen=True)
class RecallRequest:
    user_id: str
    query: str
    gold: frozenset[str] = frozenset()
    evidence: frozenset[str] = frozenset()  # evidence turn (dialogue) ids of a judged question
    depth: int | None = None  # the settings' route_limit: deeper lists are a later, explicit `deepen_pool` job


@dataclass(frozen=True)
class RecallResult:
    request: RecallRequest
    pool: RecallPool
    note: str = ""  # how the store could serve this user better (e.g. a missing columns file)
    elapsed_ms: float = 0.0  # the engine's recall, measured around it


def recall(engine: RecallEngine, request: RecallRequest, task: Job | None = None) -> RecallResult:
    """Embed the query and run the eight routes (the slow half of a search)."""
    if task is not None:
        task.check()
    # an engine whose pools cannot deepen (a live Memsense, a Qdrant server) recalls deep enough for any knob
    deepens = engine.pools_deepen and request.depth is not None
    start = time.perf_counter()
    pool = engine.recall(request.user_id, request.query, request.depth if deepens else MAX_ROUTE_DEPTH)
    elapsed_ms = (time.perf_counter() - start) * 1e3
    return RecallResult(request, pool, engine.note(request.user_id), elapsed_ms)


Reranked = tuple[tuple[Config, "Ranking | Exception"], ...]
"""Each config and its ranking of a pool, or why its re-rank failed (the UI thread reports it)."""


def rerank_each(pool: RecallPool, configs: tuple[Config, ...], task: Job | None = None) -> Reranked:
    """`pool` re-ranked under each of `configs`: on the runner when a re-rank reads thousands of
    candidates (40-130 ms for 2,000 on a 30,000-chunk user, too long for the UI thread)."""
    outcomes: list[tuple[Config, Ranking | Exception]] = []
    for cfg in configs:
        try:
            outcomes.append((cfg, rerank(pool, cfg)))
        except Exception as exc:  # noqa: BLE001 - handed over with the others: the UI thread reports it
            outcomes.append((cfg, exc))
    return tuple(outcomes)


@dataclass(frozen=True)
class Deepened:
    """A deeper pool, and its rankings under the configs that waited for it."""

    pool: RecallPool
    rankings: Reranked


def deepen_pool(pool: RecallPool, depth: int, configs: tuple[Config, ...] = (), task: Job | None = None) -> Deepened:
    """The query's pool `depth` deep, ranked from its cached route scores (no new search, but
    route lists thousands deep on large users: never on the UI thread), and re-ranked under
    each of `configs` (`rerank_each`)."""
    deeper = deepen(pool, depth)
    return Deepened(deeper, rerank_each(deeper, configs))


def preset_run(recalled: Callable[[int, Progress, threading.Event], QuestionSetRecall], cfg: Config,
               level: str = "memory", task: Job | None = None) -> dict[str, list[tuple[str, float]]]:
    """Re-rank every question of a question-set recall under one config, for a TREC run:
    question id -> (memory id, or session id at session level; final score) in result order.
    `recalled(depth, progress, cancel)` is the window's one question-set recall of the questions
    (`state.evaluation_source.EvaluationSource.recall_questions`): pools another view recalled are re-ranked,
    never recalled again."""
    progress: Progress = task.report if task is not None else _quiet
    cancel = task.cancel_event if task is not None else threading.Event()
    recall = recalled(cfg.route_limit, progress, cancel)
    entries: dict[str, list[tuple[str, float]]] = {}
    for q in recall.questions:
        if task is not None:
            task.check()
        ranking = rerank(recall.pools[q.question_id], cfg)
        chunks = [ranking.pool.chunks[r.index] for r in ranking.selected_rows]
        ids = [c.memory_id if level == "memory" else session_docid(c.user_id, c.session_number) for c in chunks]
        entries[q.question_id] = list(zip(ids, (r.final_score for r in ranking.selected_rows)))
    return entries


def _quiet(done: int, total: int, what: str) -> None:
    """No progress to show."""


def what_it_takes(pool: RecallPool, cfg: Config, memory_id: str, task: Job | None = None) -> tuple[str, WhatIf]:
    """The smallest verified single-knob changes that return `memory_id` (a second or two:
    each is a real re-rank of the query's deepest pool, deepened here first); cancellable between knobs."""
    deep = deepest(pool)
    return memory_id, what_would_change(deep, cfg, memory_id, check=task.check if task is not None else None,
                                        deepest=deep)


def judge_on_set(source: Any, start: Config, configs: list[Config], task: Job) -> tuple[list[FixCandidate], int, str]:
    """What would it take's changes judged on the chosen question set (SPEC §16, `core.evaluation.fix.judge`):
    its recall (the cached one, else recalled now, cancellable), then each config re-ranked on every
    question; (effects, questions, metric)."""
    from core.evaluation.workspace import planned_depth

    recalled = source.cases(planned_depth([start, *configs]), task.report, task.cancel_event)
    questions = list(recalled.questions)
    metric = f"recall_all@{start.top_k}"
    return judge(dict(recalled.pools), questions, start, configs, metric, cancel=task.cancel_event), len(questions), metric


def case_pools(source: Any, depth: int, task: Job) -> Any:
    """The case list's question set recall (`core.evaluation.workspace.QuestionSetRecall`),
    each pool at least `depth` deep, from a question source (recall on the engine thread through
    the source)."""
    return source.cases(depth, task.report, task.cancel_event)


def score_cases(pools: dict[str, RecallPool], questions: list[Question], cfg: Config,
                task: Job | None = None) -> tuple[list[QuestionOutcome], str]:
    """Every case under one config: its outcome and the metric that decides pass or fail,
    `recall_all@top_k` (every gold session among the results returned)."""
    k = cfg.top_k
    pools = pools_at(pools, cfg.route_limit)
    return list(evaluate_config(pools, questions, cfg, k).outcomes), metric_key("recall_all", k)


def close_engine(engine: RecallEngine, task: Job | None = None) -> None:
    engine.close()


def build_store(builder: Callable[..., Any], dataset: Path, location: Path, mode: str, task: Job) -> Any:
    """Ingest a conversation file into a new store, reporting progress; cancellable. A dataset that carries
    judged questions (LoCoMo JSON, LongMemEval) is attached to the store (`core.evaluation.workspace.attach_dataset`)."""
    from core.evaluation.workspace import attach_dataset

    stats = builder(Path(dataset), Path(location), mode=mode, progress=task.report, cancel=task.cancel_event)
    try:
        attach_dataset(location, dataset)
    except (MemsenseError, OSError):
        pass  # the store stands; its questions can still be chosen (Questions…), which attaches them
    return stats
