"""One workspace over an open store (`core.evaluation.workspace`): the store opened once, each question
recalled once and re-ranked once per config across evaluate, diagnose and fix; runs carry their history entry."""
from __future__ import annotations

import shutil
import sqlite3
import threading
import pytest

from core.config.presets import BUILTIN
from core.errors import MemsenseError
from core.evaluation import workspace_runs as runs
from core.evaluation.diagnose import RETURNED
from core.evaluation.history import History, history_path
from core.evaluation.workspace import Kept, Workspace, judged_questions, open_store
from core.recall.engine import DEMO_QUESTIONS


@pytest.fixture
def store(demo_store, tmp_path):
    """A copy of the demo store: the runs kept here stay out of the shared one's history."""
    copy = tmp_path / "store"
    shutil.copytree(demo_store, copy)
    return copy


@pytest.fixture
def counted(monkeypatch):
    """Store opens, recalls and re-ranks (each re-rank: the question's text), as they happen."""
    import core.evaluation.diagnose as diagnose_module
    import core.evaluation.evaluate as evaluate_module
    import core.recall.engine as engine_module

    seen: dict[str, list] = {"opens": [], "recalls": [], "reranks": []}
    real_engine, real_rerank = engine_module.Engine, evaluate_module.rerank

    class Counted(real_engine):  # type: ignore[misc, valid-type]
        def __init__(self, *a, **k):
            seen["opens"].append(a[0] if a else k.get("location"))
            super().__init__(*a, **k)

        def recall(self, user_id, query, *a, **k):
            seen["recalls"].append((user_id, query))
            return super().recall(user_id, query, *a, **k)

    def rerank(pool, cfg, *a, **k):
        seen["reranks"].append((pool.query, cfg))
        return real_rerank(pool, cfg, *a, **k)

    monkeypatch.setattr(engine_module, "Engine", Counted)
    monkeypatch.setattr(diagnose_module, "rerank", rerank)
    monkeypatch.setattr(evaluate_module, "rerank", rerank)
    return seen


def test_evaluate_diagnose_and_fix_open_the_store_once_and_recall_each_question_once(store, model_cache, counted):
    qs = judged_questions(DEMO_QUESTIONS)
    presets = {"memsense": BUILTIN["memsense"], "bm25_only": BUILTIN["bm25_only"]}
    with open_store(store, cache_dir=str(model_cache)) as ws:
        evaluated = runs.evaluate(ws, qs, presets, 4)
        recalls = len(counted["recalls"])
        assert recalls == len({(q.user_id, q.text) for q in qs.questions})  # each distinct question once
        assert len(counted["reranks"]) == len(presets) * len(qs.questions)  # once per config
        counted["reranks"].clear()
        diagnosed, _kept, _note = runs.diagnose(ws, qs, BUILTIN["memsense"], "memsense")
        assert len(counted["reranks"]) == len(qs.questions)  # each question re-ranked once, no second pass
        case = next(i.question_id for i in diagnosed.diagnosis.items if i.stage not in RETURNED)
        fixed, _kept, _note = runs.fix(ws, qs, ("memsense", BUILTIN["memsense"]), [case], "recall_all@4", 4, 0)
        assert len(counted["recalls"]) == recalls  # diagnose and fix re-ranked the pools evaluate recalled
    assert counted["opens"] == [store]  # the store opened once for all three
    ids = [evaluated.kept.run_id, diagnosed.run_id, fixed.run_id]
    assert None not in ids and len(set(ids)) == 3
    with History(history_path(store), create=False) as history:
        kept = {r.id: r for r in history.runs()}
    assert [kept[i].kind for i in ids] == ["eval", "diagnose", "fix"]
    assert kept[ids[0]].summary == runs.eval_summary(evaluated.results)
    assert kept[ids[1]].summary["gold_sessions"] == len(diagnosed.diagnosis.items)
    assert diagnosed.diagnosis.evaluation is not None
    assert kept[ids[1]].mean("recall_all@4", "memsense") == pytest.approx(
        diagnosed.diagnosis.evaluation.overall["recall_all@4"])


def test_the_pools_are_reused_across_question_sets_and_a_deeper_config_deepens_only_what_it_changes(
        store, model_cache, counted):
    every = judged_questions(DEMO_QUESTIONS)
    one_user = judged_questions(DEMO_QUESTIONS, users=[every.questions[0].user_id])
    with open_store(store, cache_dir=str(model_cache)) as ws:
        first = ws.recall(every, 40)
        n = len(counted["recalls"])
        again = ws.recall(one_user, 40)  # a subset: every pool at hand
        assert len(counted["recalls"]) == n and again.recalled == 0
        assert all(again.pools[q.question_id] is first.pools[q.question_id] for q in one_user.questions)
        q = one_user.questions[0]
        assert ws.pool_of(q.user_id, q.text) is first.pools[q.question_id]
        deeper = ws.recall(every, 400)
        assert deeper.recalled == len(first.needs(400)) > 0
        assert len(counted["recalls"]) == n  # deepened from the scores the pools keep: no second search


def test_a_history_that_cannot_be_written_is_a_note_not_a_failure(store, model_cache, monkeypatch):
    qs = judged_questions(DEMO_QUESTIONS)
    path = history_path(store)
    path.write_bytes(b"not a database at all" * 100)  # a damaged history
    with open_store(store, cache_dir=str(model_cache)) as ws:
        evaluated = runs.evaluate(ws, qs, {"memsense": BUILTIN["memsense"]}, 4)
    assert evaluated.results and evaluated.kept.run_id is None
    assert evaluated.kept.note.startswith("not kept in the history (") and "\n" not in evaluated.kept.note
    assert path.read_bytes() == b"not a database at all" * 100  # left as it was
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(path).execute("select * from runs").fetchall()


def test_the_kept_entry_says_why_a_run_was_not_kept():
    assert Kept(7).note == "" and Kept(None, "locked").note == "not kept in the history (locked)"


def test_a_question_set_is_of_the_store_s_users_and_checked(store, model_cache, tmp_path):
    recall_calls = []

    def recall(user_id, text, depth, cancel=None):
        recall_calls.append(user_id)
        raise AssertionError("no recall for a refused question set")

    ws = Workspace(str(store), recall, ["someone-else"], model="m")
    with pytest.raises(MemsenseError, match="the store has no user"):
        ws.question_set(DEMO_QUESTIONS)
    with pytest.raises(MemsenseError, match="about users this store does not hold"):
        ws.check_belongs(DEMO_QUESTIONS)
    with pytest.raises(MemsenseError, match="no judged questions for user nobody"):
        judged_questions(DEMO_QUESTIONS, users=["nobody"])
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(MemsenseError):
        ws.recall(judged_questions(DEMO_QUESTIONS), 40, cancel=cancel)
    assert recall_calls == []
