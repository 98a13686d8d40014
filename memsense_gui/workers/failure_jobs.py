"""The Diagnose and Find-a-fix jobs: module-level functions, no Qt, run by `workers.runner.TaskRunner`.

Both take the window's question set (its one recall, `views.evaluation_source.EvaluationSource.cases`:
pools recalled before are reused, never recalled again) and run core's own functions on it:
`core.evaluation.diagnose.diagnose` and `core.evaluation.fix.find_fixes`. Each run is then kept
in the store's history through `record` (`core.evaluation.history.keep_run`, as the CLI keeps
its runs); a history that cannot be written is a note beside the result, not a failure.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

from core.config import Config
from core.evaluation.diagnose import Diagnosis, diagnose
from core.evaluation.evaluate import evaluate_config
from core.evaluation.fix import FixResult, find_fixes
from core.evaluation.fix import offered as offered_configs
from core.evaluation.question_set import QuestionSetRecall, planned_depth
from core.evaluation.tune import KNOBS
from core.recall.pool import RecallPool, deepen
from core.records import Question
from memsense_gui.workers.runner import Job

Progress = Callable[[int, int, str], None]
Record = Callable[[str, Mapping[str, Config], Mapping[str, Any], Mapping[str, Any]], int]
"""(kind, configs by name, evaluations by name, summary) -> the history run id."""
CURRENT = "current settings"
"""The name the app's runs give the settings on screen in the history."""


class QuestionSource(Protocol):
    """The window's question set: its questions and their pools, at least `depth` deep."""

    def cases(self, depth: int, progress: Progress, cancel: threading.Event) -> QuestionSetRecall: ...


@dataclass(frozen=True)
class DiagnoseRun:
    config: Config
    questions: tuple[Question, ...]
    diagnosis: Diagnosis
    run_id: int | None
    history_note: str  # why the run was not kept ("" when it was)


@dataclass(frozen=True)
class FixRun:
    start: Config
    result: FixResult
    questions: int
    run_id: int | None
    history_note: str


def pools_at(pools: Mapping[str, RecallPool], depth: int) -> dict[str, RecallPool]:
    """Every pool able to serve `depth` (deepened from its cached route scores where needed)."""
    return {qid: p if p.serves(depth) else deepen(p, depth) for qid, p in pools.items()}


def _kept(record: Record | None, *args: Any) -> tuple[int | None, str]:
    if record is None:
        return None, "not kept in the history (no store location)"
    try:
        return record(*args), ""
    except Exception as exc:  # noqa: BLE001 - whatever the store (a live database has no folder), the result stands
        return None, f"not kept in the history ({exc})"


def diagnose_set(source: QuestionSource, cfg: Config, record: Record | None, task: Job) -> DiagnoseRun:
    """Where each gold session of the question set is lost under `cfg` (SPEC §13), kept in history: the
    question set's pools (they carry their users' chunks), each question re-ranked once."""
    recalled = source.cases(planned_depth([cfg]), task.report, task.cancel_event)
    questions = tuple(recalled.questions)
    pools = pools_at(recalled.pools, cfg.route_limit)
    result = diagnose(pools, questions, cfg, None, task.report, task.cancel_event, name=CURRENT)
    task.check()
    assert result.evaluation is not None
    run_id, note = _kept(record, "diagnose", {CURRENT: cfg}, {CURRENT: result.evaluation},
                         {"k": result.k, "gold_sessions": len(result.items), "stages": result.stages})
    return DiagnoseRun(cfg, questions, result, run_id, note)


def fix_metric(start: Config) -> str:
    """The metric a case is won back on: every gold session returned (as `memsense fix` by default)."""
    return f"recall_all@{start.top_k}"


def find_fix(source: QuestionSource, start: Config, cases: Sequence[str], trials: int, seed: int, jobs: int,
             record: Record | None, task: Job) -> FixRun:
    """Configs that win `cases` back from `start` (`core.evaluation.fix.find_fixes`), every figure
    re-ranked on every question; a cancelled search returns what it found so far."""
    recalled = source.cases(planned_depth([start], start, KNOBS), task.report, task.cancel_event)
    questions = list(recalled.questions)
    result = find_fixes(dict(recalled.pools), questions, list(cases), start, fix_metric(start), trials, seed,
                        jobs=jobs, progress=task.report, cancel=task.cancel_event)
    offered = offered_configs(result)
    configs = {CURRENT: start, **offered}
    run_id, note = _kept(record, "fix", configs,
                         {n: evaluate_config(recalled.pools, questions, c, start.top_k) for n, c in configs.items()},
                         {"metric": result.metric, "cases": list(result.cases), "trials": result.trials,
                          "candidates": [{"cases_fixed": len(c.cases_fixed), "fixed": len(c.fixed),
                                          "broken": len(c.broken), "net": c.net, "harmful": c.harmful,
                                          "metric_after": c.metric_after}
                                         for c in result.candidates]})
    return FixRun(start, result, len(questions), run_id, note)
