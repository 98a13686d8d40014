"""Failure attribution (SPEC §13): where, across a question set, each gold session was lost.

For every question and every one of its gold sessions, the session's stage is the "why not"
status (`core.rank.explain.fate_of`, SPEC §6) of the chunk of that session (its session chunks
and its turn chunks) that got furthest along the pipeline, in `STAGES` order; ties go to the
better candidate rank (then the smaller memory id). A gold session the store does not hold at
all is `absent` with no chunk. The chunk a stage was judged by is reported, so "why not" on it
(`memsense explain --memory` with the same config) says the same status.

`selected` means returned within the config's `top_k`: diagnose ranks with `top_k = k`.
"""
from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from core.config import Config
from core.errors import Cancelled
from core.evaluation.evaluate import PresetEvaluation, outcome, summarise
from core.evaluation.judged import session_qrels
from core.evaluation.metrics import relevant_of
from core.rank.explain import Fate, reads_deepest
from core.rank.ranking import Ranking
from core.rank.rerank import rerank
from core.recall.pool import RecallPool, deepest
from core.records import Chunk, Question

STAGES: tuple[str, ...] = ("absent", "zero_weight", "beyond_route_limit", "cut_from_pool", "dropped",
                           "supporting_turn", "outranked", "same_session", "duplicate", "fallback_fill", "selected")
"""The stages from least to furthest along the pipeline (SPEC §13)."""
RETURNED = frozenset({"fallback_fill", "selected"})
STAGE_MEANING: dict[str, str] = {
    "absent": "no route finds any chunk of the session at any depth (or the store lacks the session)",
    "zero_weight": "only routes weighted 0 find it",
    "beyond_route_limit": "found only deeper than route_limit",
    "cut_from_pool": "fused, but outside the candidate pool",
    "dropped": "removed by a scheme's own rule, such as a score threshold or a result cap",
    "supporting_turn": "a turn that only lent support to its session",
    "outranked": "a candidate MMR did not pick within top k",
    "same_session": "skipped: its session already had a row (selection by session)",
    "duplicate": "skipped as a duplicate of a picked row",
    "fallback_fill": "returned, appended because every remaining row was a duplicate",
    "selected": "returned in the top k",
}
"""Each stage in a few words (SPEC §13): what the app and the report say of it."""
_ORDER = {s: n for n, s in enumerate(STAGES)}


@dataclass(frozen=True)
class LostSession:
    """Where one gold session of one question ended up."""

    question_id: str
    user_id: str
    category: int
    query: str
    gold_session: int
    memory_id: str | None  # the chunk the stage was judged by (None: the store lacks the session)
    stage: str
    rank: int | None  # result rank when returned, else candidate-pool rank when in the pool
    reason: str

    def to_json(self) -> dict:
        return {"question_id": self.question_id, "user_id": self.user_id, "category": self.category,
                "query": self.query, "gold_session": self.gold_session, "memory_id": self.memory_id,
                "stage": self.stage, "rank": self.rank, "reason": self.reason}


@dataclass(frozen=True)
class QuestionLoss:
    """One question's gold sessions as a case list shows them: the ones a filter picked (`shown`,
    e.g. those lost at one stage) beside all of the question's gold sessions."""

    shown: tuple[LostSession, ...]  # at least one, all of one question
    gold: tuple[LostSession, ...]  # every gold session of the question

    @property
    def first(self) -> LostSession:
        return self.shown[0]

    @property
    def lost(self) -> int:
        """Gold sessions of the question not returned in the top k."""
        return sum(1 for i in self.gold if i.stage not in RETURNED)

    @property
    def stages(self) -> str:
        """The shown sessions' stages, each once with its count ('outranked ×2, absent')."""
        counts = Counter(i.stage for i in self.shown)
        return ", ".join(s if n == 1 else f"{s} ×{n}" for s, n in sorted(counts.items(), key=lambda kv: _ORDER[kv[0]]))

    @property
    def returned_ranks(self) -> tuple[int, ...]:
        """Result ranks of the question's gold sessions that were returned (a lost one has none)."""
        return tuple(sorted(i.rank for i in self.gold if i.stage in RETURNED and i.rank is not None))


def by_question(shown: Sequence[LostSession], every: Sequence[LostSession]) -> list[QuestionLoss]:
    """`shown` grouped by question, each question once in first-seen order, with all its gold sessions."""
    gold: dict[str, list[LostSession]] = {}
    for i in every:
        gold.setdefault(i.question_id, []).append(i)
    groups: dict[str, list[LostSession]] = {}
    for i in shown:
        groups.setdefault(i.question_id, []).append(i)
    return [QuestionLoss(tuple(g), tuple(gold[q])) for q, g in groups.items()]


@dataclass(frozen=True)
class Diagnosis:
    """Every gold session's stage, with totals overall and per question category."""

    k: int
    questions: int
    items: tuple[LostSession, ...]
    evaluation: PresetEvaluation | None = None
    """Every question's metrics under the config, from the same re-ranks (what a kept run records)."""

    @property
    def stages(self) -> dict[str, int]:
        """Stage -> gold sessions lost (or returned) there, every stage listed, in `STAGES` order."""
        counts = Counter(i.stage for i in self.items)
        return {s: counts.get(s, 0) for s in STAGES}

    @property
    def failing_questions(self) -> int:
        """Questions with at least one gold session not returned (those recall_all@k fails)."""
        return len({i.question_id for i in self.items if i.stage not in RETURNED})

    @property
    def lost_sessions(self) -> int:
        return sum(1 for i in self.items if i.stage not in RETURNED)

    def caption(self) -> str:
        """Questions and gold sessions apart: how many fail, how many sessions were lost."""
        return (f"{self.questions} questions ({self.failing_questions} fail: a gold session not in the top {self.k}), "
                f"{len(self.items)} gold sessions ({self.lost_sessions} lost, "
                f"{len(self.items) - self.lost_sessions} returned)")

    @property
    def per_category(self) -> dict[int, dict[str, int]]:
        out: dict[int, Counter] = {}
        for i in self.items:
            out.setdefault(i.category, Counter())[i.stage] += 1
        return {c: {s: n.get(s, 0) for s in STAGES} for c, n in sorted(out.items())}

    def to_json(self) -> dict:
        return {"k": self.k, "questions": self.questions, "failing_questions": self.failing_questions,
                "gold_sessions": len(self.items), "lost_sessions": self.lost_sessions, "stages": self.stages,
                "per_category": {str(c): v for c, v in self.per_category.items()},
                "items": [i.to_json() for i in self.items]}


def _position(ranking: Ranking, fate: Fate) -> int | None:
    """The rank that breaks ties between chunks at one stage: result rank, else pool rank."""
    if fate.rank is not None:
        return fate.rank
    i = ranking.pool.index_of(fate.memory_id)
    return None if i is None else ranking.candidate_rank.get(i)


def furthest(ranking: Ranking, chunks: Sequence[Chunk], recalled: RecallPool) -> tuple[Fate, int | None]:
    """The fate of the chunk that got furthest (SPEC §13 order; ties: better rank, then id).
    A chunk no route found within route_limit is looked up in the query's deepest pool (as
    "why not" does), deepened from `recalled` the first time one comes up."""
    best: tuple[tuple, Fate, int | None] | None = None
    deep: RecallPool | None = None
    for chunk in chunks:
        if deep is None and reads_deepest(ranking, chunk.memory_id):
            deep = deepest(recalled)
        fate = ranking.fate(chunk.memory_id, deep)
        pos = _position(ranking, fate)
        key = (-_ORDER[fate.status], pos is None, pos or 0, chunk.memory_id)
        if best is None or key < best[0]:
            best = (key, fate, pos)
    assert best is not None
    return best[1], best[2]


def diagnose_question(question: Question, pool: RecallPool, cfg: Config,
                      by_session: Mapping[int, Sequence[Chunk]], ranking: Ranking | None = None) -> list[LostSession]:
    """The stage of each gold session of one question, its recall pool ranked by `cfg` (or `ranking`, that
    re-rank made already)."""
    ranking = ranking if ranking is not None else rerank(pool, cfg)
    out = []
    for session in sorted(relevant_of(session_qrels(question))):
        chunks = by_session.get(session, ())
        if not chunks:
            out.append(LostSession(question.question_id, question.user_id, question.category, question.text, session,
                                   None, "absent", None, f"the store holds no chunk of session {session}"))
            continue
        fate, pos = furthest(ranking, chunks, pool)
        out.append(LostSession(question.question_id, question.user_id, question.category, question.text, session,
                               fate.memory_id, fate.status, pos, fate.reason))
    return out


def chunks_of_pools(pools: Mapping[str, RecallPool], questions: Sequence[Question]) -> dict[str, list[Chunk]]:
    """User id -> every chunk of the user, as each of the user's recall pools carries them
    (`RecallPool.user_chunks`): no second visit to the store."""
    out: dict[str, list[Chunk]] = {}
    for q in questions:
        if q.user_id not in out:
            out[q.user_id] = list(pools[q.question_id].user_chunks.values())
    return out


def sessions_of(chunks: Sequence[Chunk]) -> dict[int, list[Chunk]]:
    """Session number -> the user's chunks of that session (session and turn chunks)."""
    out: dict[int, list[Chunk]] = {}
    for c in chunks:
        out.setdefault(c.session_number, []).append(c)
    return out


def diagnose(pools: Mapping[str, RecallPool], questions: Sequence[Question], cfg: Config,
             chunks_of: Mapping[str, Sequence[Chunk]] | None = None,
             progress: Callable[[int, int, str], None] | None = None,
             cancel: threading.Event | None = None, name: str = "") -> Diagnosis:
    """Every gold session of every question, ranked by `cfg` on the cached pools: each question re-ranked
    once, its metrics (`Diagnosis.evaluation`, named `name`) read from the same re-rank.

    `chunks_of`: user id -> every chunk of the user (default: as the pools carry them, `chunks_of_pools`).
    `progress(done, total, what)` after each question; `cancel` set: `Cancelled` before the next."""
    chunks_of = chunks_of if chunks_of is not None else chunks_of_pools(pools, questions)
    by_user = {u: sessions_of(c) for u, c in chunks_of.items()}
    items: list[LostSession] = []
    outcomes = []
    for n, q in enumerate(questions, start=1):
        if cancel is not None and cancel.is_set():
            raise Cancelled("diagnose cancelled")
        pool = pools[q.question_id]
        ranking = rerank(pool, cfg)
        items.extend(diagnose_question(q, pool, cfg, by_user.get(q.user_id, {}), ranking))
        outcomes.append(outcome(q, ranking, cfg.top_k))
        if progress is not None:
            progress(n, len(questions), "diagnosing")
    return Diagnosis(cfg.top_k, len(questions), tuple(items), summarise(name, cfg, cfg.top_k, outcomes))
