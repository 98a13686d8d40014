"""Experiments: any number of kept runs compared side by side (figures recomputed independently),
runs named, noted and deleted, and `memsense runs` giving the same figures as the core."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.cv import bootstrap_ci
from core.evaluation.experiments import (compare_sides, comparison_html, delete_run, run_names, set_run_name,
                                         side_of)
from core.evaluation.history import History, history_path
from core.evaluation.metrics import compare
from tests.fixtures import run_cli

QUESTIONS = [f"u{u}:q{n}" for u in range(3) for n in range(8)]
METRIC = "recall_all@4"


def _keep(history: History, dataset, seed: int, configs=("memsense",)) -> int:
    rng = np.random.default_rng(seed)
    results = {c: {q: {METRIC: float(rng.random() < 0.4 + 0.1 * seed), "ndcg@4": float(rng.random())}
                   for q in QUESTIONS} for c in configs}
    return history.add("eval", "store", "model", str(dataset), {c: Config() for c in configs}, {}, results)


@pytest.fixture
def five_runs(tmp_path):
    dataset = tmp_path / "questions.json"
    dataset.write_text("[]", encoding="utf-8")
    store = tmp_path / "store"
    with History(history_path(store)) as history:
        ids = [_keep(history, dataset, seed) for seed in range(5)]
    return store, dataset, ids


def test_five_runs_compared_figure_by_figure(five_runs):
    store, _, ids = five_runs
    with History(history_path(store), create=False) as history:
        runs = [history.run(i) for i in ids]
    result = compare_sides([side_of(r) for r in runs], METRIC, baseline=0)
    base = {q: runs[0].results["memsense"][q][METRIC] for q in QUESTIONS}
    for r, f in zip(runs, result.figures, strict=True):
        col = np.array([r.results["memsense"][q][METRIC] for q in QUESTIONS])
        assert f.mean == pytest.approx(col.mean()) and f.ci == bootstrap_ci(col, 0)
        b = dict(zip(QUESTIONS, col))
        if f.run_id == ids[0]:
            assert f.p_value is None
        else:
            assert f.p_value == pytest.approx(compare(base, b, METRIC).p_value)
            assert f.wins == sum(b[q] > base[q] for q in QUESTIONS) and f.losses == sum(b[q] < base[q] for q in QUESTIONS)
    assert result.questions == tuple(sorted(QUESTIONS)) and result.left_out == 0
    changed = {q for q in QUESTIONS if len({r.results["memsense"][q][METRIC] for r in runs}) > 1}
    assert set(result.changed) == changed
    assert result.rows(changed_only=True) == [result.questions.index(q) for q in result.questions if q in changed]
    rows = list(csv.reader(io.StringIO(result.to_csv())))
    assert rows[0][0] == "side" and len(rows) == 1 + 5 + 1 + 1 + len(QUESTIONS)
    page = comparison_html(result)
    assert page.startswith("<!doctype html>") and "5 runs compared" in page and "<script" not in page


def test_runs_of_other_question_files_are_never_compared_silently(tmp_path, five_runs):
    store, _, ids = five_runs
    other = tmp_path / "other.json"
    other.write_text("[ ]", encoding="utf-8")
    with History(history_path(store)) as history:
        odd = _keep(history, other, 1)
        runs = [history.run(ids[0]), history.run(odd)]
    with pytest.raises(MemsenseError, match="different question files"):
        compare_sides([side_of(r) for r in runs], METRIC)
    both = compare_sides([side_of(r) for r in runs], METRIC, across_datasets=True)
    assert len(both.datasets) == 2


def test_names_notes_and_delete(five_runs):
    store, _, ids = five_runs
    with History(history_path(store)) as history:
        set_run_name(history, ids[1], name="  weights up ")
        set_run_name(history, ids[1], note="moved lexical to 2")
        assert run_names(history) == {ids[1]: ("weights up", "moved lexical to 2")}
        with pytest.raises(MemsenseError, match="at most"):
            set_run_name(history, ids[1], name="x" * 20_000)
        delete_run(history, ids[1])
        assert run_names(history) == {} and ids[1] not in [r.id for r in history.runs()]


def test_cli_runs_compare_json_equals_the_core_and_names_show(capsys, five_runs, tmp_path):
    store, _, ids = five_runs
    code, out, err = run_cli(capsys, "runs", "rename", "--store", store, ids[2], "lexical x2")
    assert code == 0, err
    code, out, err = run_cli(capsys, "runs", "compare", "--store", store, *ids, "--json",
                             "--csv", tmp_path / "cmp.csv", "--html", tmp_path / "cmp.html")
    assert code == 0, err
    data = json.loads(out)
    with History(history_path(store), create=False) as history:
        names = run_names(history)
        core = compare_sides([side_of(history.run(i), None, names.get(i, ("", ""))[0]) for i in ids], METRIC)
    assert data == json.loads(json.dumps(core.to_json()))
    assert data["sides"][2]["label"] == f"run {ids[2]} lexical x2"
    assert (tmp_path / "cmp.csv").read_text() == core.to_csv() and (tmp_path / "cmp.html").exists()
    code, out, _ = run_cli(capsys, "runs", "list", "--store", store)
    assert code == 0 and "“lexical x2”" in out
    code, _, err = run_cli(capsys, "runs", "compare", "--store", store, ids[0])
    assert code == 2 and "two or more runs" in err
    code, _, err = run_cli(capsys, "runs", "compare", "--store", store, "1", "nope")
    assert code == 2 and "no run id" in err
    code, _, err = run_cli(capsys, "runs", "show", "--store", store, "999")
    assert code == 1 and "no run 999" in err and "Traceback" not in err


def test_config_takes_a_kept_run(capsys, demo_store, model_cache):
    """`--config run:ID[:CONFIG]`: the settings a kept run ranked, for eval and fix alike."""
    from core.recall.engine import DEMO_QUESTIONS

    common = [DEMO_QUESTIONS, "--store", demo_store, "--cache", model_cache, "--quiet"]
    code, out, err = run_cli(capsys, "eval", *common, "--preset", "bm25_only", "--json")
    assert code == 0, err
    with History(history_path(demo_store), create=False) as history:
        run = history.runs()[-1]
    code, out, err = run_cli(capsys, "eval", *common, "--config", f"run:{run.id}", "--json")
    assert code == 0, err
    data = json.loads(out)
    name = f"run {run.id} (bm25_only)"
    assert name in json.dumps(data) and run.config() == run.config("bm25_only")
    code, _, err = run_cli(capsys, "eval", *common, "--config", "run:x")
    assert code == 2 and "run:ID" in err
    code, _, err = run_cli(capsys, "eval", *common, "--config", "run:99999")
    assert code == 1 and "no run 99999" in err


def test_a_run_keeps_the_ids_each_config_returned_and_the_categories(tmp_path):
    """Kept beside the runs table: a history of an older version (no such table) reads as runs that kept none."""
    from core.config import Config
    from core.evaluation.evaluate import evaluate_config
    from core.evaluation.run_keeping import keep_run
    from tests.evaluation.test_cv import judged

    pools, questions = judged(per_user=2)
    dataset = tmp_path / "q.json"
    dataset.write_text("[]", encoding="utf-8")
    store = tmp_path / "store"
    old = History(history_path(store))
    old.add("eval", "s", "m", str(dataset), {"c": Config()}, {}, {"c": {"q": {METRIC: 1.0}}})
    old.db.close()
    evaluations = {"memsense": evaluate_config(pools, questions, Config(), name="memsense"),
                   "k2": evaluate_config(pools, questions, Config(rrf_k=2.0), name="k2")}
    rid = keep_run(store, "eval", dataset, {n: e.config for n, e in evaluations.items()}, evaluations, {}, model="m")
    with History(history_path(store), create=False) as history:
        first, run = history.runs()
        assert first.returned == {} and first.categories == {}
        assert history.run(rid) == run
    for name, ev in evaluations.items():
        assert run.returned[name] == {o.question_id: list(o.result_ids) for o in ev.outcomes}
    assert run.categories == {q.question_id: q.category for q in questions}
    result = compare_sides([side_of(run, "memsense"), side_of(run, "k2")], METRIC)
    assert result.returned[1] == run.returned["k2"] and result.categories == run.categories
    assert result.to_json()["matrix"][0]["returned"] == [run.returned[c][result.questions[0]] for c in ("memsense", "k2")]

