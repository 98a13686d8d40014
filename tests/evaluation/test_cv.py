"""Cross-validation by user and the Optuna study, on synthetic pools (no model, no store)."""
from __future__ import annotations

import numpy as np
import pytest

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.evaluate import evaluate_config
from core.evaluation.cv import bootstrap_ci, cross_validate, user_folds
from core.evaluation.study import tune_tpe
from core.rank.synthetic import synthetic_pool
from core.evaluation.tune import ALL_KNOBS, KNOBS, tune
from core.records import Question

USERS = ("u1", "u2", "u3", "u4", "u5")


def judged(per_user: int = 4):
    pools, questions = {}, []
    rng = np.random.default_rng(7)
    for u in USERS:
        for n in range(per_user):
            qid = f"{u}-q{n}"
            pools[qid] = synthetic_pool(n_sessions=8, turns_per_session=2, seed=len(pools), user_id=u)
            gold = tuple(sorted(rng.choice(np.arange(1, 9), size=int(rng.integers(1, 3)), replace=False).tolist()))
            questions.append(Question(qid, u, f"question {qid}", "", 1, gold))
    return pools, questions


def test_folds_hold_whole_users_out_and_cover_each_once():
    folds = user_folds(list(USERS) * 2, 3, seed=1)
    assert sorted(u for f in folds for u in f) == sorted(USERS)
    assert [len(f) for f in folds] == [2, 2, 1] and user_folds(USERS, 3, seed=1) == folds
    with pytest.raises(MemsenseError, match="--folds 6 needs at least 6 users"):
        user_folds(USERS, 6)
    with pytest.raises(MemsenseError, match="at least 2"):
        user_folds(USERS, 1)


@pytest.mark.parametrize("search,name", [(tune, "local"), (tune_tpe, "tpe")])
def test_every_question_is_scored_by_a_config_that_never_saw_its_user(search, name):
    pools, questions = judged()
    cv = cross_validate(pools, questions, search, name, folds=5, trials=12, seed=0, knobs=ALL_KNOBS,
                        sensitivity_points=0)
    assert len(cv.folds) == 5 and cv.questions == len(questions)
    for f in cv.folds:
        assert not set(f.held_users) & set(f.train_users)
        held = [q for q in questions if q.user_id in f.held_users]
        assert f.held == pytest.approx(evaluate_config(pools, held, f.tuned).overall["recall_all@4"])
        assert f.start_held == pytest.approx(evaluate_config(pools, held, Config()).overall["recall_all@4"])
    pooled = np.mean([evaluate_config(pools, [q], f.tuned).overall["recall_all@4"]
                      for f in cv.folds for q in questions if q.user_id in f.held_users])
    assert cv.cv_metric == pytest.approx(pooled)
    assert cv.start_metric == pytest.approx(evaluate_config(pools, questions, Config()).overall["recall_all@4"])
    lo, hi = cv.gain_ci
    assert lo <= cv.gain <= hi
    assert cv.generalises == (cv.gain > 0)
    assert cv.best == cv.choice.chosen.config and "one-standard-error rule" in cv.verdict()
    searched = next(c for c in cv.choice.contenders if c.kind == "search")
    assert searched.folds == tuple(f.held for f in cv.folds) and searched.config == cv.final.best.config


def test_no_gain_offers_the_start():
    pools, questions = judged()
    cv = cross_validate(pools, questions, tune, "local", folds=5, trials=1, seed=0, sensitivity_points=0)
    assert cv.gain == 0 and not cv.generalises
    assert cv.chosen.kind == "start" and cv.best == Config() and [c.kind for c in cv.choice.contenders] == ["start"]


def test_bootstrap_ci_brackets_the_mean_and_is_seeded():
    values = np.random.default_rng(0).normal(0.1, 1.0, 300)
    lo, hi = bootstrap_ci(values, seed=3)
    assert lo < values.mean() < hi and (lo, hi) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(np.zeros(10)) == (0.0, 0.0)


def test_study_resumes_from_disk_and_refuses_other_settings(tmp_path):
    pools, questions = judged(per_user=2)
    train, test = questions[:6], questions[6:]
    db = f"sqlite:///{tmp_path / 'study.db'}"
    first = tune_tpe(pools, train, test, trials=5, storage=db, study_name="s", sensitivity_points=0)
    again = tune_tpe(pools, train, test, trials=9, storage=db, study_name="s", sensitivity_points=0)
    assert len(first.trials) == 5 and len(again.trials) == 9
    assert [t.config for t in again.trials[:5]] == [t.config for t in first.trials]
    assert again.trials[0].config == Config() and again.best.train >= first.best.train
    with pytest.raises(MemsenseError, match="with different metric"):
        tune_tpe(pools, train, test, metric="mrr", trials=6, storage=db, study_name="s")
    with pytest.raises(MemsenseError, match="with different train_users"):
        tune_tpe(pools, test, train, trials=6, storage=db, study_name="s")


def test_tpe_is_seeded_and_reports_importances():
    pools, questions = judged(per_user=2)
    a = tune_tpe(pools, questions, [], trials=15, seed=4, sensitivity_points=2)
    b = tune_tpe(pools, questions, [], trials=15, seed=4, sensitivity_points=0)
    assert [t.train for t in a.trials] == [t.train for t in b.trials]
    assert a.importances and set(a.importances) <= {k.name for k in KNOBS}
    assert sum(a.importances.values()) == pytest.approx(1.0)
    assert b.importances == {}  # no sensitivity analysis asked for: no forest fitted


@pytest.mark.slow
def test_cli_tune_folds_reports_each_fold(capsys, demo_engine, demo_store, model_cache, tmp_path):
    import json

    from core.cli.main import main as cli
    from core.recall.engine import DEMO_QUESTIONS

    common = [str(DEMO_QUESTIONS), "--store", str(demo_store), "--cache", str(model_cache), "--quiet",
              "--presets", str(tmp_path / "presets.json")]
    demo_engine.close()
    try:
        code = cli(["tune", *common, "--folds", "3", "--trials", "6", "--json", "--sensitivity-points", "0",
                    "--study-db", str(tmp_path / "study.db"), "--export", str(tmp_path / "tuned.toml")])
        out = json.loads(capsys.readouterr().out)
        code5 = cli(["tune", *common, "--folds", "5"])
        err = capsys.readouterr().err
    finally:
        demo_engine.__init__(demo_store, cache_dir=model_cache)
    assert code == 0 and len(out["folds"]) == 3
    assert {"train", "held_out", "start_held_out", "gain"} <= set(out["folds"][0])
    assert out["cross_validated"] - out["start"] == pytest.approx(out["gain"])
    chosen = out["chosen"]
    assert out["exported"] and (tmp_path / "tuned.toml").exists() and out["choice"]["chosen"] == chosen["name"]
    assert {c["name"] for c in out["choice"]["contenders"]} >= {"memsense", "sessions", "bm25_only", "tuned (search)"}
    assert code5 == 1 and "--folds 5 needs at least 5 users" in err
