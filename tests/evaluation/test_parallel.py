"""Scoring in worker processes (`core.evaluation.parallel`): every question's values exactly as
`rerank` and `question_metrics` give them one by one, the same seeded study with any number of
jobs, and no worker left behind after a cancelled search."""
from __future__ import annotations

import multiprocessing
import threading
from dataclasses import replace

import numpy as np
import pytest

from core.config import Config
from core.evaluation.judged import session_qrels
from core.evaluation.metrics import question_metrics
from core.evaluation import parallel
from core.evaluation.parallel import Evaluator, _split, pack
from core.evaluation.study import tune_tpe
from core.evaluation.tune import ALL_KNOBS, evaluator_for, tune
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from core.records import Question
from tests.evaluation.test_batch import random_configs


@pytest.fixture(autouse=True)
def small_shards(monkeypatch):
    """These question sets are small: workers anyway, so the parallel path is what is tested."""
    monkeypatch.setattr(parallel, "MIN_SHARD_ROWS", 1)


def case(n_users: int = 3, per_user: int = 5):
    """Pools of several users, some sharing a user's chunks, and judged questions on them."""
    pools, questions = {}, []
    rng = np.random.default_rng(0)
    for u in range(n_users):
        for j in range(per_user):
            qid = f"u{u}-q{j}"
            pools[qid] = synthetic_pool(n_sessions=6 + u, turns_per_session=4, dim=8, seed=100 * u + j % 3,
                                        route_hit_rate=0.5 + 0.1 * (j % 3), user_id=f"user{u}")
            gold = tuple(int(s) for s in rng.choice(np.arange(1, 7 + u), size=1 + j % 2, replace=False))
            questions.append(Question(qid, f"user{u}", f"question {j}", "answer", 1 + j % 4, gold))
    return pools, questions


def expected(pools, questions, cfg, names, k):
    rankings = [rerank(pools[q.question_id], cfg) for q in questions]
    rows = [question_metrics([g.pool.chunks[r.index].session_number for r in g.selected_rows], session_qrels(q), k)
            for q, g in zip(questions, rankings)]
    return np.array([[r[n] for r in rows] for n in names])


def test_workers_score_every_question_as_rerank_does():
    pools, questions = case()
    metrics = [("recall_all@4", 4), ("ndcg@4", 4), ("mrr", 4)]
    cfgs = list(random_configs(7, 12)) + [replace(Config(), scheme="linear")]  # the last one: in this process
    with Evaluator(pools, questions, metrics, jobs=1) as one, Evaluator(pools, questions, metrics, jobs=2) as two:
        assert two.jobs == 2
        assert all(s.batch.arrays_kept for s in one._shards)
        assert not any(s.batch.arrays_kept or s.batch.blocks for s in two._shards)  # the workers hold them
        got_one, got_two = one.many(cfgs), two.many(cfgs)
        single = two.values(cfgs[0])
    for cfg, a, b in zip(cfgs, got_one, got_two):
        want = expected(pools, questions, cfg, [m for m, _ in metrics], 4)
        assert a.tolist() == want.tolist() and b.tolist() == want.tolist(), cfg
    assert single.tolist() == got_two[0].tolist()
    assert not multiprocessing.active_children()


def test_a_seeded_study_makes_the_same_trials_with_any_number_of_jobs():
    pools, questions = case()
    train = [q for q in questions if q.user_id != "user2"]
    test = [q for q in questions if q.user_id == "user2"]
    runs = [tune_tpe(pools, train, test, trials=14, seed=3, knobs=ALL_KNOBS, sensitivity_points=3, jobs=jobs)
            for jobs in (1, 2)]
    a, b = ([(t.config, t.train, t.test, t.tiebreak) for t in r.trials] for r in runs)
    assert a == b
    assert runs[0].sensitivity == runs[1].sensitivity
    local = [tune(pools, train, test, trials=10, seed=1, sensitivity_points=0, jobs=jobs) for jobs in (1, 2)]
    assert [t.train for t in local[0].trials] == [t.train for t in local[1].trials]


def test_cancel_stops_the_search_and_its_workers():
    pools, questions = case()
    cancel = threading.Event()

    def progress(done, total, what):
        if done >= 3:
            cancel.set()

    result = tune_tpe(pools, questions, [], trials=50, jobs=2, progress=progress, cancel=cancel)
    assert result.cancelled and 3 <= len(result.trials) < 50
    assert not multiprocessing.active_children()


def test_a_shared_evaluator_scores_subsets_and_rejects_another_metric():
    pools, questions = case(2, 4)
    with evaluator_for(pools, questions, "recall_all@4") as ev:
        part = tune(pools, questions[:4], questions[4:], trials=3, sensitivity_points=0, evaluator=ev)
        alone = tune(pools, questions[:4], questions[4:], trials=3, sensitivity_points=0)
        assert [t.train for t in part.trials] == [t.train for t in alone.trials]
        with pytest.raises(ValueError):
            tune(pools, questions[:4], [], metric="mrr", trials=1, evaluator=ev)


def test_shards_cover_the_questions_once():
    for sizes, parts in [([5] * 7, 2), ([1, 100, 1, 1], 3), ([3], 4), ([], 2), ([2, 2], 2)]:
        ranges = _split(sizes, parts)
        covered = [i for a, b in ranges for i in range(a, b)]
        assert covered == list(range(len(sizes))) and len(ranges) <= max(1, parts)
    assert Config(**pack(Config().with_weights(lexical=2.0))) == Config().with_weights(lexical=2.0)


def test_a_small_question_set_is_scored_in_this_process(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_SHARD_ROWS", 10**9)
    pools, questions = case()
    with Evaluator(pools, questions, [("mrr", 4)], jobs=4) as ev:
        assert ev.jobs == 1 and not multiprocessing.active_children()


def _echo_sum(conn) -> None:
    """A child that maps the shared rows sent to it, unpickles their handle and sends back their values."""
    from core.evaluation import shared_rows

    if shared_rows.receive(conn):
        rows = conn.recv()
        conn.send((rows.array.tolist(), rows.array.flags.writeable))


def test_shared_rows_reach_another_process_as_one_mapping():
    """The child reads the parent's values from its own read-only mapping; the pickle that names
    them is a few bytes, whatever their size."""
    import pickle

    from core.evaluation import shared_rows

    made = shared_rows.make((300, 64))
    if made is None:
        pytest.skip("no memfd on this platform: the rows go with the shard")
    made.array[:] = np.arange(300 * 64, dtype=np.float64).reshape(300, 64) / 7
    assert len(pickle.dumps(made)) < 200 < made.nbytes
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_echo_sum, args=(child,), daemon=True)
    proc.start()
    child.close()
    shared_rows.send(parent, [made], proc.pid)
    made.close()  # the descriptor went with the message: the child's mapping does not need it
    parent.send(made)
    values, writeable = parent.recv()
    proc.join(timeout=10)
    assert values == made.array.tolist() and writeable is False


def test_a_large_users_vectors_are_shared_by_the_workers(demo_engine, monkeypatch):
    """With every user past the share size, each worker maps its users' vectors from one copy:
    the values are those of one process, and a shard's pickle no longer carries the vectors."""
    import pickle

    from core.evaluation import batch_chunks
    from core.evaluation.batch import PoolBatch
    from core.evaluation.batch_chunks import SharedVectors
    from tests.evaluation.test_batch import engine_pools

    ps, questions = engine_pools(demo_engine)
    pools = {q.question_id: p for q, p in zip(questions, ps)}
    if batch_chunks.shared_rows.make((1, 1)) is None:
        pytest.skip("no memfd on this platform: the rows go with the shard")
    monkeypatch.setattr(batch_chunks, "SHARE_BYTES", 0)
    metrics = [("recall_all@4", 4), ("ndcg@4", 4)]
    cfgs = list(random_configs(5, 10))
    with Evaluator(pools, questions, metrics, jobs=1) as one, Evaluator(pools, questions, metrics, jobs=2) as two:
        assert two.jobs == 2 and one.shared_bytes == 0
        users = {p.user_id: p.vectors.matrix for p in pools.values()}
        read = {u: set() for u in users}
        for p in pools.values():
            read[p.user_id].update(p.vectors.rows.tolist())
        assert two.shared_bytes == sum(len(read[u]) * users[u].shape[1] * 8 for u in users) > 0
        for a, b in zip(one.many(cfgs), two.many(cfgs)):
            assert a.tolist() == b.tolist()
    half = list(pools.values())[: len(pools) // 2]
    shared = SharedVectors(list(pools.values()))
    lean = pickle.dumps(PoolBatch(half, shared=shared).without_pools())
    plain = pickle.dumps(PoolBatch(half, table_bytes=0).without_pools())  # vectors, not tables, as the shared ones
    vectors = sum(m.nbytes for m in shared.made)
    assert vectors > 0 and len(lean) < len(plain) - vectors // 2
    shared.close()


def test_without_shared_memory_the_vectors_go_with_each_shard(demo_engine, monkeypatch):
    """No memfd (macOS, Windows) or no memory for it: nothing is shared, the values are the same."""
    from core.evaluation import batch_chunks, shared_rows
    from tests.evaluation.test_batch import engine_pools

    ps, questions = engine_pools(demo_engine)
    pools = {q.question_id: p for q, p in zip(questions, ps)}
    monkeypatch.setattr(batch_chunks, "SHARE_BYTES", 0)

    def full(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shared_rows.os, "posix_fallocate", full)
    assert shared_rows.make((4, 4)) is None
    metrics = [("recall_all@4", 4)]
    cfgs = list(random_configs(6, 4))
    with Evaluator(pools, questions, metrics, jobs=1) as one, Evaluator(pools, questions, metrics, jobs=2) as two:
        assert two.jobs == 2 and two.shared_bytes == 0
        for a, b in zip(one.many(cfgs), two.many(cfgs)):
            assert a.tolist() == b.tolist()
