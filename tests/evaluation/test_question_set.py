"""One recall per question set: pools recalled once at an explicit depth, reused by every
consumer, recalled deeper only for the questions whose lists a deeper depth would change."""
from __future__ import annotations

import threading
import zlib
from dataclasses import replace

import numpy as np
import pytest

from core.config import Config
from core.config.presets import BUILTIN
from core.errors import Cancelled
from core.evaluation.evaluate import evaluate_config
from core.evaluation.question_set import QuestionSetKey, file_digest, planned_depth, recall_question_set, serving
from core.evaluation.tune import ALL_KNOBS, knob_depth
from core.rank.synthetic import synthetic_pool
from core.records import Question

SMALL, BIG = "small", "big"
"""A user whose route lists end within 40 rows (18 chunks), and one whose lists do not."""


def cut(pool, depth: int):
    """The pool with every route list kept `depth` deep, as a recall that deep gives it."""
    inside = (pool.ranks > 0) & (pool.ranks <= depth)
    return replace(pool, ranks=np.where(inside, pool.ranks, 0).astype(np.int32),
                   scores=np.where(inside, pool.scores, np.nan), depth=depth)


class Recorder:
    """A recall function over synthetic pools that counts its calls."""

    def __init__(self):
        self.calls: list[tuple[str, str, int]] = []

    def __call__(self, user: str, text: str, depth: int):
        self.calls.append((user, text, depth))
        pool = synthetic_pool(n_sessions=2 if user == SMALL else 30, seed=zlib.crc32(f"{user}|{text}".encode()),
                              user_id=user, query=text)
        return cut(pool, depth)


def questions() -> list[Question]:
    qs = [Question(f"{u}:q{i}", u, f"question {i}", "", 1, (1,)) for u in (SMALL, BIG) for i in range(3)]
    return qs + [Question("big:again", BIG, "question 0", "", 2, (2,))]  # asked twice: recalled once


KEY = QuestionSetKey("store|model m|lexical bm25", "digest", (BIG, SMALL))


def test_each_distinct_question_is_recalled_once_and_a_second_set_reuses_the_pools():
    recall, known = Recorder(), {}
    qs = questions()
    first = recall_question_set(recall, KEY, qs, 40, plan=64, known=known)
    assert sorted(recall.calls) == sorted({(q.user_id, q.text, 64) for q in qs})  # recalled at the plan's depth
    assert first.recalled == 6 and set(first.pools) == {q.question_id for q in qs}
    assert first.pools["big:again"] is first.pools["big:q0"] and first.depth == 64 and first.serves(64)
    again = recall_question_set(recall, KEY, qs[:2], 64, known=known)  # a subset (fewer users): nothing recalled
    assert len(recall.calls) == 6 and again.recalled == 0
    assert again.pools_of(qs[:1]) == {qs[0].question_id: first.pools[qs[0].question_id]}


def test_a_deeper_depth_recalls_only_the_questions_it_changes():
    recall, known = Recorder(), {}
    qs = questions()
    value = recall_question_set(recall, KEY, qs, 40, known=known)
    small = value.pools["small:q0"]
    assert small.exhausted and not value.pools["big:q0"].exhausted
    assert {q.user_id for q in value.needs(200)} == {BIG}  # the small user's lists ended before 40
    recall.calls.clear()
    deeper = recall_question_set(recall, KEY, qs, 200, known=known)
    assert sorted(recall.calls) == [(BIG, f"question {i}", 200) for i in range(3)]
    assert deeper.depth == 200 and not deeper.needs(200)
    restated = deeper.pools["small:q0"]
    assert restated.depth == 200 and restated.chunks == small.chunks and (restated.ranks == small.ranks).all()
    assert serving(small, 40) is small and serving(value.pools["big:q0"], 200) is None


def test_the_pools_rank_as_pools_recalled_at_the_config_depth():
    recall, known = Recorder(), {}
    qs = questions()
    cfg = BUILTIN["memsense"]
    value = recall_question_set(recall, KEY, qs, cfg.route_limit, plan=400, known=known)
    fresh = {q.question_id: recall(q.user_id, q.text, cfg.route_limit) for q in qs}
    shared = evaluate_config(value.pools, qs, cfg).outcomes
    assert [o.sessions for o in shared] == [o.sessions for o in evaluate_config(fresh, qs, cfg).outcomes]


def test_cancel_keeps_what_was_recalled():
    cancel, known = threading.Event(), {}
    recall = Recorder()

    def stop_after_two(user, text, depth):
        if len(recall.calls) == 2:
            cancel.set()
        return recall(user, text, depth)

    with pytest.raises(Cancelled):
        recall_question_set(stop_after_two, KEY, questions(), 40, known=known, cancel=cancel)
    assert len(known) == 3  # the third recall ran; the loop stopped before the fourth
    recall.calls.clear()
    recall_question_set(recall, KEY, questions(), 40, known=known)
    assert len(recall.calls) == 3  # only the rest


def test_the_planned_depth_covers_every_config_and_the_tuned_pool_limits(tmp_path):
    cfgs = [Config(), Config(top_k=50)]
    assert planned_depth(cfgs) == Config(top_k=50).route_limit
    assert planned_depth([Config()], tune_from=Config()) == knob_depth(ALL_KNOBS, 4) > Config().route_limit
    path = tmp_path / "q.json"
    path.write_text("[]")
    before = file_digest(path)
    path.write_text("[ ]")
    assert file_digest(path) != before
