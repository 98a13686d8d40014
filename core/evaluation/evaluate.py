"""Evaluate presets on judged questions: recall once per question, re-rank per preset (§8).

Recall (embedding, vector search, BM25) is the slow step and runs once per question
(`recall_pools`); each preset is then `rerank(pool, cfg)` on the cached pool, about a
millisecond, so comparing presets or tuning over hundreds of configs costs little more than
one recall pass. A result counts through its chunk's `session_number`: the ranked list of
sessions is scored against the question's session grades (`core.evaluation.judged.session_qrels`) with
the metrics of `core.evaluation.metrics`, overall and per category (macro-averaged over questions).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from core.config import Config
from core.errors import Cancelled, MemsenseError
from core.ingest import longmemeval
from core.evaluation.judged import session_qrels
from core.evaluation.metrics import mean_metrics, metric_names, question_metrics, relevant_of
from core.rank.ranking import Ranking
from core.rank.rerank import rerank
from core.recall.pool import RecallPool
from core.records import Question

CATEGORY_NAMES: dict[int, str] = {0: "manual", 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                                  **longmemeval.CATEGORY_NAMES}
"""LoCoMo's category numbers (§8), LongMemEval's question types (§11, from 11); 0 = questions
judged by hand in the app."""

Recall = Callable[[str, str, int], RecallPool]  # (user_id, query, depth) -> pool
Progress = Callable[[int, int, str], None]  # (done, total, stage)


def category_name(category: int) -> str:
    return CATEGORY_NAMES.get(category, f"category {category}")


@dataclass(frozen=True)
class QuestionOutcome:
    """One question under one preset: its results as sessions and its metrics."""

    question_id: str
    user_id: str
    category: int
    text: str
    gold_sessions: tuple[int, ...]  # sessions graded ≥ 1
    sessions: tuple[int, ...]  # session number of each result, in result order
    result_ids: tuple[str, ...]
    scores: tuple[float, ...]  # final score of each result
    metrics: Mapping[str, float]


@dataclass(frozen=True)
class PresetEvaluation:
    """One preset on a question set: overall and per-category means, and every question."""

    preset: str
    config: Config
    k: int
    overall: Mapping[str, float]
    per_category: Mapping[int, Mapping[str, float]]
    category_counts: Mapping[int, int]
    outcomes: tuple[QuestionOutcome, ...] = field(repr=False)

    @property
    def questions(self) -> int:
        return len(self.outcomes)

    @property
    def metric_names(self) -> tuple[str, ...]:
        return metric_names(self.k)

    def scores(self, metric: str) -> dict[str, float]:
        """Question id -> this preset's value of `metric` (for paired comparison)."""
        return {o.question_id: o.metrics[metric] for o in self.outcomes}

    def to_json(self) -> dict:
        """`{preset, <metric>@k..., questions, per_category: {"1": {name, questions, <metric>...}}}`."""
        out: dict = {"preset": self.preset, **{m: self.overall.get(m, 0.0) for m in self.metric_names},
                     "questions": self.questions, "per_category": {}}
        for cat, values in sorted(self.per_category.items()):
            out["per_category"][str(cat)] = {"name": category_name(cat), "questions": self.category_counts[cat],
                                             **values}
        return out


def check_users(questions: Iterable[Question], users: Iterable[str]) -> None:
    """Every question's user must have a store; the message names the missing ones."""
    known = set(users)
    missing = sorted({q.user_id for q in questions} - known)
    if missing:
        raise MemsenseError(f"the store has no user {', '.join(missing)} (it holds {', '.join(sorted(known)) or 'none'}); "
                            "ingest the same dataset into the store, or pass the matching question file")


def missing_gold(questions: Iterable[Question],
                 sessions_of: Callable[[str], set[int]]) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Question id -> (user, its gold sessions the store does not hold), for the questions that
    have any: they can only score 0 there, which usually means a store built from other data."""
    held: dict[str, set[int]] = {}
    out = {}
    for q in questions:
        if q.user_id not in held:
            held[q.user_id] = sessions_of(q.user_id)
        gone = tuple(sorted(set(relevant_of(session_qrels(q))) - held[q.user_id]))
        if gone:
            out[q.question_id] = (q.user_id, gone)
    return out


def missing_gold_note(questions: Sequence[Question], sessions_of: Callable[[str], set[int]]) -> str:
    """One sentence when gold sessions are missing from the store ("" when none are), said the
    same way by the CLI (a warning line) and the app (the Evaluation view's status)."""
    missing = missing_gold(questions, sessions_of)
    if not missing:
        return ""
    qid, (user, sessions) = next(iter(missing.items()))
    return (f"{len(missing)} of {len(questions)} questions have gold sessions the store does not hold (e.g. {qid}: "
            f"session {', '.join(map(str, sessions))} of {user}); they score 0 on them. Was the store built from "
            "this dataset?")


def repeated_questions_note(questions: Sequence[Question]) -> str:
    """One sentence when a user is asked the same question more than once ("" otherwise): each
    copy is scored, so it counts double in every mean. A warning, not a refusal: a file may
    repeat a question on purpose, and the scores stay well defined."""
    seen: dict[tuple[str, str], list[Question]] = {}
    for q in questions:
        seen.setdefault((q.user_id, " ".join(q.text.split()).casefold()), []).append(q)
    repeats = [copies for copies in seen.values() if len(copies) > 1]
    if not repeats:
        return ""
    first = repeats[0]
    extra = sum(len(copies) - 1 for copies in repeats)
    return (f"questions asked more than once of the same user: {len(repeats)} (e.g. {first[0].text!r} of "
            f"{first[0].user_id}, {len(first)} times); each copy is scored, so {extra} extra copies weigh in every "
            "mean; remove them for one score per distinct question")


def judged_only(questions: Iterable[Question]) -> list[Question]:
    """Questions with at least one relevant session (the rest cannot be scored)."""
    return [q for q in questions if relevant_of(session_qrels(q))]


def recall_depth(configs: Iterable[Config]) -> int:
    """How deep recall must keep each route list for these configs (their largest route_limit)."""
    return max((c.route_limit for c in configs), default=Config().route_limit)


def recall_pools(recall: Recall, questions: Sequence[Question], depth: int, progress: Progress | None = None,
                 cancel: threading.Event | None = None) -> dict[str, RecallPool]:
    """Question id -> its recall pool, one recall per question. Cancel raises MemsenseError."""
    pools: dict[str, RecallPool] = {}
    for n, q in enumerate(questions):
        if cancel is not None and cancel.is_set():
            raise Cancelled("evaluation cancelled")
        if progress:
            progress(n, len(questions), "recall")
        pools[q.question_id] = recall(q.user_id, q.text, depth)
    if progress:
        progress(len(questions), len(questions), "recall")
    return pools


def outcome(question: Question, ranking: Ranking, k: int) -> QuestionOutcome:
    """Score one ranking: results -> session numbers -> metrics at k against the session grades."""
    pool = ranking.pool
    rows = ranking.selected_rows
    sessions = tuple(pool.chunks[r.index].session_number for r in rows)
    qrels = session_qrels(question)
    return QuestionOutcome(
        question.question_id, question.user_id, question.category, question.text,
        tuple(sorted(relevant_of(qrels))), sessions, tuple(pool.chunks[r.index].memory_id for r in rows),
        tuple(r.final_score for r in rows), question_metrics(sessions, qrels, k),
    )


def summarise(name: str, cfg: Config, k: int, outcomes: Sequence[QuestionOutcome]) -> PresetEvaluation:
    by_cat: dict[int, list[QuestionOutcome]] = {}
    for o in outcomes:
        by_cat.setdefault(o.category, []).append(o)
    per_category = {c: mean_metrics(o.metrics for o in os_) for c, os_ in sorted(by_cat.items())}
    counts = {c: len(os_) for c, os_ in sorted(by_cat.items())}
    return PresetEvaluation(name, cfg, k, mean_metrics(o.metrics for o in outcomes), per_category, counts,
                            tuple(outcomes))


def evaluate_config(pools: Mapping[str, RecallPool], questions: Sequence[Question], cfg: Config, k: int = 4,
                    name: str = "") -> PresetEvaluation:
    """One config over cached pools (every question must have its pool)."""
    outcomes = [outcome(q, rerank(pools[q.question_id], cfg), k) for q in questions]
    return summarise(name, cfg, k, outcomes)


def evaluate_presets(pools: Mapping[str, RecallPool], questions: Sequence[Question], presets: Mapping[str, Config],
                     k: int = 4, progress: Progress | None = None,
                     cancel: threading.Event | None = None) -> list[PresetEvaluation]:
    """Every preset over the same cached pools, in the order given."""
    out = []
    for n, (name, cfg) in enumerate(presets.items()):
        if cancel is not None and cancel.is_set():
            raise Cancelled("evaluation cancelled")
        if progress:
            progress(n, len(presets), f"re-rank {name}")
        out.append(evaluate_config(pools, questions, cfg, k, name))
    if progress:
        progress(len(presets), len(presets), "done")
    return out


def evaluate(recall: Recall, questions: Sequence[Question], presets: Mapping[str, Config], k: int = 4,
             progress: Progress | None = None, cancel: threading.Event | None = None) -> list[PresetEvaluation]:
    """Recall once per judged question, then evaluate every preset on the cached pools."""
    questions = judged_only(questions)
    if not questions:
        raise MemsenseError("no judged questions to evaluate: none has a relevant session "
                            "(LoCoMo keeps categories 1-4 with evidence; mark results 1-3 in the app)")
    pools = recall_pools(recall, questions, recall_depth(presets.values()), progress, cancel)
    return evaluate_presets(pools, questions, presets, k, progress, cancel)
