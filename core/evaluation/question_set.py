"""One recall per question set: the pools of every judged question, recalled once and shared
by everything that evaluates them (issue 17).

Recall (embedding, vector search, BM25) is the slow step, about 40 ms a question; ranking a
pool under a config takes about a millisecond. A `QuestionSetRecall` is the pool of every
question of a set, each recalled at an explicit depth (`depth`: how deep every route list was
kept), so evaluating presets, scoring cases or tuning re-ranks it and never searches again.

What changes the pools keys them (`QuestionSetKey`): the store and the query embedder (the
`source` that recalls), the question file's content and the users asked about. The depth is
not part of the key: a value serves any config whose `route_limit` is at most its depth, and
a config that needs more recalls deeper only the questions that need it. A pool whose route
lists all ended before its depth (every hit of every route is in it) is the same at any
deeper depth, so it is restated at the deeper depth instead of being recalled again.

`recall_question_set` builds the value from pools already at hand (`known`, by user and
question text: the same question in two sets, or asked twice, is recalled once) and recalls the
rest, with progress and cancel; pools recalled before a cancel stay in `known`.

How deep to recall (`planned_depth`) is the deepest `route_limit` of every config that will be
ranked: the presets, the current settings, and, for tuning, the top of the pool-limit knobs'
ranges (`core.evaluation.tune.knob_depth`).
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping, MutableMapping, Sequence

from core.config import Config
from core.evaluation.evaluate import Progress, Recall, recall_depth, recall_pools
from core.evaluation.tune import ALL_KNOBS, Knob, knob_depth
from core.recall.pool import RecallPool, deepen
from core.records import Question

Asked = tuple[str, str]
"""(user id, question text): what a recall depends on besides the store and the depth."""


@dataclass(frozen=True)
class QuestionSetKey:
    """What the pools of a question set depend on (the depth aside)."""

    source: str
    """The store and the query embedder that recall: e.g. the store's location, the model's
    content key and the lexical mode (`recall_source`)."""
    questions: str
    """The question file's content digest (`file_digest`)."""
    users: tuple[str, ...]
    """The users whose questions are in the set, sorted."""


def recall_source(location: str, model_key: str, lexical: str = "bm25") -> str:
    """The `QuestionSetKey.source` of an engine on the store at `location`."""
    return f"{location}|model {model_key}|lexical {lexical}"


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (of standard input for `-`, as the command read it)."""
    from core.files import STDIN, stdin_bytes

    data = stdin_bytes() if str(path) == STDIN else Path(path).read_bytes()
    return hashlib.sha256(data).hexdigest()


def serving(pool: RecallPool, depth: int) -> RecallPool | None:
    """`pool` as a pool at least `depth` deep: itself, or restated at `depth` when its lists
    ended before its own depth (`RecallPool.exhausted`: the same pool at any depth); None when
    only a deeper recall can serve `depth`."""
    if pool.depth >= depth:
        return pool
    return replace(pool, depth=depth) if pool.serves(depth) else None


@dataclass(frozen=True, eq=False)
class QuestionSetRecall:
    """The pool of every question of a set, each at least `depth` deep."""

    key: QuestionSetKey
    questions: tuple[Question, ...]
    pools: Mapping[str, RecallPool] = field(repr=False)
    """Question id -> its pool."""
    depth: int
    recalled: int = 0
    """How many recalls building this value made (pools at hand are not counted)."""

    def serves(self, depth: int) -> bool:
        """Every config with `route_limit` ≤ `depth` can rank these pools."""
        return self.depth >= depth

    def needs(self, depth: int) -> tuple[Question, ...]:
        """The questions whose pools a recall `depth` deep would change (the others serve it)."""
        return tuple(q for q in self.questions if serving(self.pools[q.question_id], depth) is None)

    def pools_of(self, questions: Iterable[Question]) -> dict[str, RecallPool]:
        """Question id -> pool of these questions (a subset of the set's)."""
        return {q.question_id: self.pools[q.question_id] for q in questions}


def planned_depth(configs: Iterable[Config], tune_from: Config | None = None,
                  knobs: Sequence[Knob] = ALL_KNOBS) -> int:
    """How deep to recall a question set that `configs` will rank and, with `tune_from`, that
    a search over `knobs` starting there will (the top of the pool-limit ranges at its top_k)."""
    depth = recall_depth(configs)
    return depth if tune_from is None else max(depth, knob_depth(knobs, tune_from.top_k))


def recall_question_set(recall: Recall, key: QuestionSetKey, questions: Sequence[Question], depth: int, *,
                        plan: int = 0, known: MutableMapping[Asked, RecallPool] | None = None,
                        progress: Progress | None = None,
                        cancel: threading.Event | None = None) -> QuestionSetRecall:
    """The pools of `questions`, each serving `depth`: taken from `known` when a pool there
    serves it, else recalled `max(depth, plan)` deep (one recall per distinct user and text;
    a known pool that keeps its query's scores is deepened from them instead, with no new
    search: `core.recall.pool.deepen`) and put in `known`. Cancel raises `core.errors.Cancelled`;
    what was recalled by then stays in `known`."""
    known = {} if known is None else known
    depth = max(int(depth), 1)
    deep = max(depth, int(plan))
    at_hand: dict[Asked, RecallPool] = {}
    todo: dict[Asked, Question] = {}  # the first question asking each (user, text) no known pool serves
    for q in questions:
        asked = (q.user_id, q.text)
        if asked in at_hand or asked in todo:
            continue
        pool = serving(known[asked], depth) if asked in known else None
        if pool is None:
            todo[asked] = q
        else:
            at_hand[asked] = pool

    def kept(user_id: str, text: str, d: int) -> RecallPool:
        before = known.get((user_id, text))
        if before is not None and before.source is not None and before.max_depth >= d:
            pool = deepen(before, d)
        else:
            pool = recall(user_id, text, d)
        known[user_id, text] = pool
        return pool

    if todo:
        fresh = recall_pools(kept, list(todo.values()), deep, progress, cancel)
        at_hand.update({asked: fresh[q.question_id] for asked, q in todo.items()})
    pools = {q.question_id: at_hand[q.user_id, q.text] for q in questions}
    return QuestionSetRecall(key, tuple(questions), pools, min((p.depth for p in pools.values()), default=deep),
                             len(todo))
