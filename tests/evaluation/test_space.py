"""The search space a user shapes (locks, ranges) and the trials a search streams as it goes."""
from __future__ import annotations

import math

import pytest

from core.config import Config
from core.errors import MemsenseError
from core.evaluation.cv import cross_validate
from core.evaluation.space import search_space
from core.evaluation.study import tune_tpe
from core.evaluation.tune import ALL_KNOBS, KNOBS, best_of, tune
from tests.evaluation.test_cv import judged


def _knob(name):
    return next(k for k in ALL_KNOBS if k.name == name)


@pytest.mark.parametrize("ranges, words", [
    ({"mmr_lambda": (0.8, 0.4)}, "min must be below its max"),
    ({"mmr_lambda": (0.5, 0.5)}, "min must be below its max"),
    ({"mmr_lambda": (0.2, math.inf)}, "finite"),
    ({"mmr_lambda": (math.nan, 0.9)}, "finite"),
    ({"mmr_lambda": (0.2, 1.5)}, "outside the values it may take (0 to 1)"),
    ({"rrf_k": (0.0, 50.0)}, "log scale"),
    ({"no_such_knob": (0.0, 1.0)}, "no knob no_such_knob"),
])
def test_bad_ranges_are_refused_in_one_line_naming_the_knob(ranges, words):
    with pytest.raises(MemsenseError) as err:
        search_space(KNOBS, ranges=ranges)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_locking_every_knob_or_a_value_out_of_range_is_refused():
    with pytest.raises(MemsenseError, match="unlock at least one"):
        search_space(KNOBS, locked={k.name: k.get(Config()) for k in KNOBS})
    with pytest.raises(MemsenseError, match="outside the values"):
        search_space(KNOBS, locked={"alpha": 7.0})


def test_a_space_keeps_locked_knobs_out_and_narrows_ranges():
    space = search_space(KNOBS, locked={"mmr_lambda": 0.55}, ranges={"rrf_k": (5.0, 40.0)})
    names = [k.name for k in space.knobs]
    assert "mmr_lambda" not in names and len(names) == len(KNOBS) - 1
    assert _knob("rrf_k").bounds != (5.0, 40.0) and next(k for k in space.knobs if k.name == "rrf_k").bounds == (5.0, 40.0)
    assert space.start(Config()).mmr_lambda == 0.55 and space.signature()
    assert search_space(KNOBS).default and search_space(KNOBS).signature() == ""


@pytest.mark.parametrize("search", [tune, tune_tpe])
def test_locked_knobs_never_move_ranges_hold_and_every_trial_is_streamed(search):
    pools, questions = judged()
    train = [q for q in questions if q.user_id != "u5"]
    test = [q for q in questions if q.user_id == "u5"]
    space = search_space(KNOBS, locked={"mmr_lambda": 0.61}, ranges={"alpha": (0.2, 0.4)})
    seen = []
    result = search(pools, train, test, trials=25, start=space.start(Config()), knobs=space.knobs,
                    sensitivity_points=0, on_trial=seen.append)
    assert seen == list(result.trials) and len(seen) == 25
    assert {t.config.mmr_lambda for t in result.trials} == {0.61}
    assert all(0.2 <= t.config.alpha <= 0.4 for t in result.trials[1:])
    assert best_of(seen) == result.best


def test_a_resumed_study_streams_its_kept_trials_first(tmp_path):
    pools, questions = judged()
    store = tmp_path / "study.journal"
    first = tune_tpe(pools, questions, [], trials=6, knobs=KNOBS, storage=store, study_name="s",
                     sensitivity_points=0)
    seen = []
    again = tune_tpe(pools, questions, [], trials=9, knobs=KNOBS, storage=store, study_name="s",
                     sensitivity_points=0, on_trial=seen.append)
    assert seen == list(again.trials) and seen[:6] == list(first.trials)


def test_cross_validation_streams_each_folds_trials_under_its_name():
    pools, questions = judged()
    seen = []
    cv = cross_validate(pools, questions, tune_tpe, "tpe", folds=2, trials=4, sensitivity_points=0,
                        on_trial=lambda run, trial: seen.append((run, trial)))
    runs = [r for r, _ in seen]
    assert runs == ["fold 1"] * 4 + ["fold 2"] * 4 + ["all users"] * 4
    assert [t for r, t in seen if r == "all users"] == list(cv.final.trials)


def test_knobs_set_together_give_the_config_set_one_after_another():
    """`set_knobs` (one copy for the fields, one for the weights: what each trial makes) is the
    config `Knob.set` knob after knob gives, from any start, values out of range and all."""
    import numpy as np

    from core.evaluation.tune import set_knobs

    rng = np.random.default_rng(5)
    for _ in range(200):
        start = ALL_KNOBS[int(rng.integers(len(ALL_KNOBS)))].set(Config(), float(rng.normal()))
        chosen = [k for k in ALL_KNOBS if rng.random() < 0.7]
        values = [(k, k.draw(rng) * float(rng.choice([1.0, 1.0, 3.0, -1.0]))) for k in chosen]
        one_by_one = start
        for knob, value in values:
            one_by_one = knob.set(one_by_one, value)
        assert set_knobs(start, values) == one_by_one
    assert set_knobs(Config(), []) == Config()


@pytest.mark.parametrize("search", ["tpe", "local"])
def test_the_steps_after_the_trials_report_progress(search):
    """The sweep of each knob and the importances take seconds after the last trial: each
    knob's sweep is reported (done of the knobs), then the importances (a step of unknown
    length, total 0); a run asked for no sweep reports neither."""
    pools, questions = judged(per_user=2)
    reports: list[tuple[int, int, str]] = []
    run = tune_tpe if search == "tpe" else tune
    result = run(pools, questions, [], trials=6, knobs=KNOBS, sensitivity_points=2,
                 progress=lambda *r: reports.append(r))
    after = reports[next(i for i, r in enumerate(reports) if r[2].startswith("sensitivity")):]
    assert not any(r[2].startswith("trial") for r in after)
    sweeps = [r for r in after if r[2].startswith("sensitivity")]
    assert [(d, t) for d, t, _ in sweeps] == [(n, len(KNOBS)) for n in range(1, len(KNOBS) + 1)]
    assert [w for *_, w in sweeps] == [f"sensitivity to {k.name}" for k in KNOBS] and set(result.sensitivity) == {k.name for k in KNOBS}
    if search == "tpe":
        assert after[-1] == (0, 0, "importance of each knob (fANOVA)")
    quiet: list[tuple[int, int, str]] = []
    run(pools, questions, [], trials=6, knobs=KNOBS, sensitivity_points=0, progress=lambda *r: quiet.append(r))
    assert all(r[2].startswith("trial") for r in quiet)
