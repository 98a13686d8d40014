"""Evaluation over cached pools, auto-tuning, and the eval / compare / tune / judge commands,
on synthetic pools (no model); the real store runs behind @pytest.mark.slow."""
from __future__ import annotations

import json
import threading
import zlib
from dataclasses import replace
from types import SimpleNamespace

import pytest

from tests.fixtures import run_cli
from core.config import Config
from core.errors import MemsenseError
from core.evaluation.evaluate import evaluate, evaluate_config, judged_only, outcome, recall_pools
from core.evaluation.metrics import question_metrics
from core.config.presets import BUILTIN
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from core.evaluation.tune import KNOBS, split_users, tune
from core.records import Question

USERS = ("u1", "u2", "u3")


def fake_recall(user: str, query: str, depth: int = 0):
    return synthetic_pool(n_sessions=10, seed=zlib.crc32(f"{user}|{query}".encode()), user_id=user, query=query)


def questions(per_user: int = 6) -> list[Question]:
    out = []
    for u in USERS:
        for i in range(per_user):
            gold = (1 + i % 10,) if i % 3 else (1 + i % 10, 1 + (i + 4) % 10)
            out.append(Question(f"{u}:q{i}", u, f"question {i} of {u}", "", 1 + i % 4, gold))
    return out


class FakeEngine:
    """Stands in for core.recall.engine.Engine: synthetic pools, no model, no store."""

    recalls: list[tuple[str, str, int]] = []  # every recall of every instance: (user, query, depth)

    def __init__(self, location, model=None, cache_dir=None, lexical="bm25", **route_options):  # analyzers: no index here
        self.location = location
        self.embedder = SimpleNamespace(key="fake-model")

    def users(self):
        return list(USERS)

    def embed_queries(self, queries, progress=None, cancelled=None):
        """No model here: nothing to embed ahead of the recalls."""

    def recall(self, user, query, depth=0):
        FakeEngine.recalls.append((user, query, depth))
        return fake_recall(user, query, depth)

    def chunks(self, user):
        return list(fake_recall(user, "any").chunks)

    def close(self):
        pass


@pytest.fixture()
def dataset(tmp_path):
    items = [{"user": q.user_id, "question": q.text, "answer": "", "category": q.category,
              "evidence": [f"D{s}:1" for s in q.gold_sessions]} for q in questions()]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    return path


@pytest.fixture()
def fake_engine(monkeypatch):
    import core.recall.engine

    monkeypatch.setattr(core.recall.engine, "Engine", FakeEngine)
    FakeEngine.recalls.clear()


# -- evaluation -------------------------------------------------------------------------------------------
def test_outcome_maps_results_to_sessions_and_scores_them():
    q = Question("u1:q0", "u1", "question", "", 1, (3, 5))
    ranking = rerank(fake_recall("u1", "question"), Config())
    o = outcome(q, ranking, 4)
    assert o.result_ids == tuple(ranking.result_ids)
    assert o.sessions == tuple(int(m.split(":S")[1][:3]) for m in ranking.result_ids)
    assert o.metrics == question_metrics(o.sessions, {3: 1, 5: 1}, 4)


def test_evaluate_recalls_once_and_averages_per_category():
    qs = questions()
    calls = []

    def counting(user, query, depth):
        calls.append(query)
        return fake_recall(user, query)

    results = evaluate(counting, qs, {"memsense": BUILTIN["memsense"], "bm25_only": BUILTIN["bm25_only"]})
    assert len(calls) == len(qs)  # one recall per question, shared by both presets
    for r in results:
        assert r.questions == len(qs)
        per_q = [o.metrics["recall_any@4"] for o in r.outcomes]
        assert r.overall["recall_any@4"] == pytest.approx(sum(per_q) / len(per_q))
        for cat, values in r.per_category.items():
            mine = [o.metrics["ndcg@4"] for o in r.outcomes if o.category == cat]
            assert values["ndcg@4"] == pytest.approx(sum(mine) / len(mine))
            assert r.category_counts[cat] == len(mine)
        js = r.to_json()
        assert set(js) >= {"preset", "recall_any@4", "recall_all@4", "recall@4", "mrr", "ndcg@4", "questions",
                           "per_category"}


def test_evaluate_cancel_and_nothing_to_judge():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(MemsenseError, match="cancelled"):
        evaluate(fake_recall, questions(), dict(BUILTIN), cancel=cancel)
    with pytest.raises(MemsenseError, match="no judged questions"):
        evaluate(fake_recall, [Question("u1:m1", "u1", "q", "", 0, ())], dict(BUILTIN))
    manual = Question("u1:m1", "u1", "q", "", 0, (), relevance={"u1:S002:P0": 2})
    assert judged_only([manual]) == [manual]


# -- tuning --------------------------------------------------------------------------------------------------
def test_tune_is_seeded_never_worse_than_start_and_reports_held_out_users():
    qs = questions()
    pools = recall_pools(fake_recall, qs, 64)
    train, test = split_users(qs, ["u1", "u2"], ["u3"])
    first = tune(pools, train, test, "recall_all@4", trials=12, seed=3, sensitivity_points=3)
    again = tune(pools, train, test, "recall_all@4", trials=12, seed=3, sensitivity_points=3)
    assert [t.train for t in first.trials] == [t.train for t in again.trials]
    assert len(first.trials) == 12 and first.trials[0].config == Config()
    assert first.best.train >= first.start.train
    assert first.best.train == pytest.approx(evaluate_config(pools, train, first.best.config).overall["recall_all@4"])
    assert first.best.test == pytest.approx(evaluate_config(pools, test, first.best.config).overall["recall_all@4"])
    assert set(first.sensitivity) == {k.name for k in KNOBS}
    assert all(len(pts) >= 3 for pts in first.sensitivity.values())
    assert first.to_json()["best"]["config"]["routeWeights"]


def test_tune_cancel_returns_the_history_so_far():
    qs = questions()
    pools = recall_pools(fake_recall, qs, 64)
    train, test = split_users(qs, ["u1"], ["u2"])
    cancel = threading.Event()
    seen = []

    def progress(done, total, what):
        seen.append(done)
        if done == 3:
            cancel.set()

    result = tune(pools, train, test, trials=50, progress=progress, cancel=cancel)
    assert result.cancelled and len(result.trials) == 3 and not result.sensitivity
    assert seen == [1, 2, 3]


def test_split_users_rejects_overlap_and_unknown_users():
    with pytest.raises(MemsenseError, match="both --train and --test"):
        split_users(questions(), ["u1"], ["u1"])
    with pytest.raises(MemsenseError, match="no judged questions for user zz"):
        split_users(questions(), ["zz"], ["u1"])


# -- command line ---------------------------------------------------------------------------------------------


def test_eval_json_lists_every_builtin_preset(capsys, dataset, fake_engine):
    code, out, _ = run_cli(capsys, "eval", dataset, "--store", "x", "--json", "--quiet")
    assert code == 0
    rows = json.loads(out)
    assert [r["preset"] for r in rows] == list(BUILTIN)
    assert all(r["questions"] == len(questions()) for r in rows)
    assert set(rows[0]["per_category"]["1"]) >= {"name", "questions", "recall_all@4", "ndcg@4"}
    depth = max(c.route_limit for c in BUILTIN.values())  # every preset re-ranks one recall per question
    assert sorted(FakeEngine.recalls) == sorted((q.user_id, q.text, depth) for q in questions())


def test_eval_keeps_preset_and_config_order(capsys, dataset, fake_engine, tmp_path):
    from core import config as config_io

    cfg_path = tmp_path / "mine.toml"
    config_io.save(replace(Config(), rrf_k=30.0), cfg_path)
    code, out, _ = run_cli(capsys, "eval", dataset, "--store", "x", "--json", "--quiet", "--preset", "bm25_only",
                           "--config", cfg_path, "--preset", "memsense", "--k", "2", "--presets", tmp_path / "p.json")
    rows = json.loads(out)
    assert [r["preset"] for r in rows] == ["bm25_only", "mine", "memsense"]
    assert "recall_all@2" in rows[0]


def test_compare_and_errors_are_one_line(capsys, dataset, fake_engine):
    code, out, _ = run_cli(capsys, "compare", dataset, "--store", "x", "--a", "memsense", "--b", "bm25_only",
                           "--json", "--quiet")
    data = json.loads(out)
    assert code == 0 and data["metric"] == "recall_all@4"
    m = data["metrics"]["recall_all@4"]
    assert m["wins"] + m["losses"] + m["ties"] == len(questions())
    assert len(data["differences"]) == m["wins"] + m["losses"]
    code, _, err = run_cli(capsys, "compare", dataset, "--store", "x", "--a", "nope", "--b", "memsense")
    assert code == 1 and err.startswith("memsense: error: unknown preset 'nope'") and err.count("\n") == 1


def test_tune_saves_and_exports_the_best(capsys, dataset, fake_engine, tmp_path):
    from core import config as config_io
    from core.config.presets import PresetStore

    presets, export = tmp_path / "presets.json", tmp_path / "best.toml"
    code, out, err = run_cli(capsys, "tune", dataset, "--store", "x", "--train", "u1,u2", "--test", "u3",
                             "--trials", 6, "--sensitivity-points", 0, "--json", "--presets", presets,
                             "--save-preset", "tuned", "--export", export)
    assert code == 0, err
    data = json.loads(out)
    # two training users: the choice among the start, the presets and the search is cross-validated over
    # them (2 folds), and every contender is reported on the held-out user u3, who took no part in it
    assert len(data["folds"]) == 2 and data["test_users"] == ["u3"]
    assert {f["held_users"][0] for f in data["folds"]} == {"u1", "u2"}
    assert set(data["test"]) == {c["name"] for c in data["choice"]["contenders"]} >= {"memsense", "bm25_only"}
    from core.evaluation.tune import ALL_KNOBS, knob_depth

    depth = knob_depth(ALL_KNOBS, Config().top_k)  # one recall per question, deep enough for every pool limit tried
    assert sorted(FakeEngine.recalls) == sorted((q.user_id, q.text, depth) for q in questions())
    assert PresetStore(presets).get("tuned") == config_io.load(export) == config_io.from_dict(data["best"]) \
        == config_io.from_dict(data["chosen"]["config"])
    code, _, err = run_cli(capsys, "tune", dataset, "--store", "x", "--train", "u1", "--test", "u1")
    assert code == 1 and "both --train and --test" in err
    code, _, err = run_cli(capsys, "tune", dataset, "--store", "x", "--train", "u1", "--test", "u2", "--jobs", 0)
    assert code == 2 and "--jobs must be at least 1" in err


def test_judge_commands_round_trip(capsys, dataset, fake_engine, tmp_path):
    qrels, judged, run = tmp_path / "q.qrels", tmp_path / "judged.json", tmp_path / "run.txt"
    assert run_cli(capsys, "judge", "qrels", dataset, "--out", qrels)[0] == 0
    code, _, err = run_cli(capsys, "judge", "import", qrels, "--questions", dataset, "--out", judged,
                           "--store", "x")
    assert code == 0, err
    code, _, err = run_cli(capsys, "judge", "run", judged, "--store", "x", "--preset", "memsense", "--out", run,
                           "--quiet")
    assert code == 0, err
    lines = run.read_text().splitlines()
    assert lines[0].split()[1] == "Q0" and lines[0].split()[-1] == "memsense" and len(lines[0].split()) == 6
    with qrels.open("a") as f:
        f.write("u1:q0 0 u1:S001\n")
    code, _, err = run_cli(capsys, "judge", "import", qrels, "--questions", dataset, "--out", judged)
    assert code == 1 and "expected 4 columns, found 3" in err and str(qrels) in err


# -- the real store (slow) ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_demo_questions_on_the_demo_store(demo_engine):
    from core.recall.engine import DEMO_QUESTIONS
    from core.evaluation.judged import load_question_set

    qs = judged_only(load_question_set(DEMO_QUESTIONS))
    results = evaluate(lambda u, q, d: demo_engine.recall(u, q, depth=d), qs, dict(BUILTIN))
    assert [r.preset for r in results] == list(BUILTIN)
    assert all(0 <= r.overall["recall_any@4"] <= 1 for r in results)
    assert max(r.overall["recall_any@4"] for r in results) > 0.5


def test_whole_session_bm25_reproduces_the_section8_yardstick():
    """The metrics against an independent measurement: SPEC §8's BM25-over-whole-sessions figures."""
    from tools.evaluate_report import YARDSTICK, whole_session_bm25
    from core.evaluation.judged import load_question_set
    from tests.fixtures import shared_file

    path = shared_file("datasets", "locomo", "locomo-dev.json")
    result = whole_session_bm25(path, judged_only(load_question_set(path)))
    any_, all_ = YARDSTICK["BM25 over whole sessions"]
    assert result.overall["recall_any@4"] == pytest.approx(any_, abs=0.005)
    assert result.overall["recall_all@4"] == pytest.approx(all_, abs=0.001)
