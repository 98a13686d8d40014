"""The one-standard-error choice among configs (SPEC §16), as docs/EVALUATION.md works it through,
and on a constructed case where the search's train-best config loses out of sample."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.config import Config
from core.evaluation.choice import PRESET, SEARCH, START, Contender, choose, contender
from core.evaluation.cv import cross_validate
from core.evaluation.tune import Trial, TuneResult
from core.records import Question
from core.rank.synthetic import synthetic_pool


def test_worked_example_of_docs_evaluation():
    """docs/EVALUATION.md's example: five folds; the search has the best mean, a preset with two
    settings changed is within one standard error, the start is not."""
    start = Contender("memsense", START, Config(), (0.70, 0.74, 0.72, 0.69, 0.75), 0)
    preset = Contender("sessions", PRESET, Config(rrf_k=10.0), (0.79, 0.81, 0.78, 0.81, 0.79), 2)
    search = Contender("tuned (search)", SEARCH, Config(rrf_k=12.0), (0.80, 0.83, 0.76, 0.84, 0.80), 9)
    choice = choose([start, preset, search])
    assert search.mean == pytest.approx(0.806)
    sd = np.std([0.80, 0.83, 0.76, 0.84, 0.80], ddof=1)
    assert search.se == pytest.approx(sd / math.sqrt(5)) and search.se == pytest.approx(0.01400, abs=5e-5)
    assert choice.best is search and choice.bar == pytest.approx(0.806 - search.se)
    assert preset.mean == pytest.approx(0.796) and preset.mean >= choice.bar
    assert start.mean < choice.bar
    assert choice.chosen is preset and choice.runner_up is search
    assert [c.name for c in choice.contenders] == ["tuned (search)", "sessions", "memsense"]
    assert "within one standard error of the best" in choice.reason() and "2 settings changed" in choice.reason()


def test_ties_on_knobs_go_to_the_higher_mean_and_one_contender_is_chosen():
    a = Contender("a", PRESET, Config(), (0.5, 0.6), 1)
    b = Contender("b", PRESET, Config(), (0.55, 0.6), 1)
    assert choose([a, b]).chosen is b
    only = Contender("start", START, Config(), (0.4,), 0)
    choice = choose([only])
    assert choice.chosen is only and choice.runner_up is None and only.se == 0.0


def test_knobs_changed_count_every_setting_that_differs_from_the_start():
    start = Config()
    c = contender("x", PRESET, Config(rrf_k=10.0, alpha=0.0).with_weights(lexical=0.5), [0.1, 0.2], start)
    assert c.knobs_changed == 3


def _pools_where_training_misleads():
    """Ten users; on the training folds a config that over-fits looks best, while on held-out users
    the preset wins. Built by pools whose gold sits where the preset puts it for every user, and where
    the search can find configs that fit each fold's training users by chance."""
    pools, questions = {}, []
    rng = np.random.default_rng(11)
    for u in range(10):
        for n in range(3):
            qid = f"u{u}-q{n}"
            pools[qid] = synthetic_pool(n_sessions=8, turns_per_session=2, seed=100 * u + n, user_id=f"u{u}")
            gold = tuple(sorted(rng.choice(np.arange(1, 9), size=2, replace=False).tolist()))
            questions.append(Question(qid, f"u{u}", f"question {qid}", "", 1, gold))
    return pools, questions


def test_the_search_train_best_loses_to_a_preset_chosen_out_of_sample():
    """A search that takes the best of 40 random configs on its training users: on every user its pick
    scores 0.400, above the preset's 0.333, and a choice by training score would ship it. Scored on
    held-out users, the preset is within one standard error of the search with 1 setting changed
    against 16, so the rule offers the preset."""
    from core.evaluation.evaluate import evaluate_config
    from core.evaluation.tune import KNOBS, set_knobs

    pools, questions = _pools_where_training_misleads()
    rng = np.random.default_rng(5)
    grid = [set_knobs(Config(), ((k, k.draw(rng)) for k in KNOBS)) for _ in range(40)]
    good = Config(rrf_k=30.0)

    def best_of_grid(pools, train, test, metric="recall_all@4", start=None, **_):
        trials = [Trial(n, "random", c, evaluate_config(pools, train, c).overall[metric],
                        evaluate_config(pools, test, c).overall[metric] if test else None, 0.0)
                  for n, c in enumerate([start or Config(), *grid])]
        return TuneResult(metric, (), (), len(train), len(test), tuple(trials),
                          max(trials, key=lambda t: (t.train, -t.number)))

    cv = cross_validate(pools, questions, best_of_grid, "best of 40", folds=5, seed=0,
                        presets={"good": good}, start_name="memsense")
    search = next(c for c in cv.choice.contenders if c.kind == SEARCH)
    preset = next(c for c in cv.choice.contenders if c.name == "good")
    on_all = evaluate_config(pools, questions, good).overall["recall_all@4"]
    assert cv.final.best.train == pytest.approx(0.4) and on_all == pytest.approx(1 / 3)  # train: the search wins
    assert cv.choice.best is search and search.knobs_changed == 16 and preset.knobs_changed == 1
    assert search.mean - search.se <= preset.mean < search.mean
    assert cv.chosen is preset and cv.best == good != cv.final.best.config and cv.choice.runner_up is search
    assert preset.folds == tuple(
        evaluate_config(pools, [q for q in questions if q.user_id in f.held_users], good).overall["recall_all@4"]
        for f in cv.folds)


def _candidate(after: float, p: float, net: int, cases: int, knobs: int = 1, before: float = 0.7):
    from core.evaluation.fix import FixCandidate

    fixed = tuple(f"f{i}" for i in range(max(net, 0) + 10))
    broken = tuple(f"b{i}" for i in range(len(fixed) - net))
    return FixCandidate(Config(), {f"k{i}": (0.0, 1.0) for i in range(knobs)}, tuple(f"c{i}" for i in range(cases)),
                        fixed, broken, before, after, p, before, after)


def test_fix_candidates_harmful_last_then_by_metric_over_every_question():
    """SPEC §16's order on constructed candidates: the one that fixes the most cases but lowers the
    metric over every question at p < 0.05 is harmful, said so, and listed after every other one."""
    from core.evaluation.fix import FixResult, candidate_order

    harmful = _candidate(0.60, 0.001, -40, cases=5)
    lower_not_significant = _candidate(0.69, 0.30, -3, cases=4)
    best = _candidate(0.75, 0.01, 12, cases=1)
    same_metric_more_net = _candidate(0.72, 0.2, 8, cases=1)
    same_metric_less_net = _candidate(0.72, 0.2, 5, cases=3)
    ordered = sorted([harmful, lower_not_significant, same_metric_less_net, best, same_metric_more_net],
                     key=candidate_order)
    assert ordered == [best, same_metric_more_net, same_metric_less_net, lower_not_significant, harmful]
    assert harmful.harmful and not lower_not_significant.harmful and not best.harmful
    assert "harmful: lowers the metric over every question 0.700 → 0.600 (p 0.001)" in harmful.harm_text()
    result = FixResult("recall_all@4", ("c0",), 10, tuple(ordered))
    assert result.safe[0] is best and "1 harmful (listed last)" in result.verdict()
    data = result.to_json()
    assert [c["harmful"] for c in data["candidates"]] == [False, False, False, False, True]
    assert data["candidates"][0]["net"] == 12 and data["safe_fix_found"]
    only_harm = FixResult("recall_all@4", ("c0",), 10, (harmful,))
    assert not only_harm.safe and only_harm.verdict().startswith("no safe fix found")
    assert only_harm.to_json()["safe_fix_found"] is False


def test_find_fixes_lists_the_best_safe_candidate_first_on_synthetic_pools():
    from core.evaluation.fix import candidate_order, find_fixes
    from tests.evaluation.test_cv import judged

    pools, questions = judged(per_user=6)
    before = evaluate_config_scores(pools, questions)
    cases = [q for q, v in before.items() if v < 1.0][:4]
    result = find_fixes(pools, questions, cases + cases[:1], Config(), trials=40, seed=1)
    assert result.cases == tuple(cases)  # a case named twice is one case
    assert list(result.candidates) == sorted(result.candidates, key=candidate_order)
    safe = [c for c in result.candidates if not c.harmful]
    if safe:
        assert result.candidates[0] is safe[0] and safe[0].metric_after == max(c.metric_after for c in safe)
    for c in result.candidates:
        others = [q for q in before if q not in cases]
        after = evaluate_config_scores(pools, questions, c.config)
        assert c.others_before == pytest.approx(np.mean([before[q] for q in others]))
        assert c.others_after == pytest.approx(np.mean([after[q] for q in others]))
        assert c.net == sum(after[q] > before[q] for q in before) - sum(after[q] < before[q] for q in before)


def evaluate_config_scores(pools, questions, cfg=None):
    from core.evaluation.evaluate import evaluate_config

    return evaluate_config(pools, questions, cfg or Config()).scores("recall_all@4")


def test_judge_agrees_with_the_plain_rerank_and_with_find_fixes_verification():
    from core.evaluation.evaluate import evaluate_config
    from core.evaluation.fix import judge
    from core.evaluation.metrics import compare
    from tests.evaluation.test_cv import judged

    pools, questions = judged(per_user=3)
    start = Config()
    configs = [Config(rrf_k=2.0), Config(mmr_lambda=0.3), Config(scheme="linear", alpha=0.0)]
    effects = judge(pools, questions, start, configs, "recall_all@4", cases=[questions[0].question_id])
    a = evaluate_config(pools, questions, start).scores("recall_all@4")
    for cfg, e in zip(configs, effects, strict=True):
        b = evaluate_config(pools, questions, cfg).scores("recall_all@4")
        assert e.metric_before == pytest.approx(np.mean(list(a.values())))
        assert e.metric_after == pytest.approx(np.mean(list(b.values())))
        assert e.p_value == pytest.approx(compare(a, b, "recall_all@4").p_value)
        assert sorted(e.fixed) == sorted(q for q in a if b[q] > a[q])
        assert sorted(e.broken) == sorted(q for q in a if b[q] < a[q])
        rest = [q for q in a if q != questions[0].question_id]
        assert e.others_after == pytest.approx(np.mean([b[q] for q in rest]))
