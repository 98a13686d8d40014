"""The auto-tuning panel over a synthetic tuning run: history, sensitivity plot, save as preset."""
from __future__ import annotations

import zlib

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QMessageBox

from core.config.presets import BUILTIN, PresetStore
from core.evaluation.cv import CrossValidation, cross_validate
from core.evaluation.evaluate import recall_pools
from core.evaluation.study import tune_tpe
from core.rank.synthetic import synthetic_pool
from memsense_gui.views.autotune import AutoTuneView
from tests.gui.fixtures import TUNE_USERS as USERS, synthetic_tune, tune_questions


def test_tuning_run_fills_history_and_sensitivity_and_saves(qtbot, tmp_path):
    store = PresetStore(tmp_path / "presets.json")
    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS, save_preset=store.save)
    qtbot.addWidget(view)
    view.show()
    assert view.ticked(view.train_list) == ["synth-a"] and view.ticked(view.test_list) == ["synth-b", "synth-c"]
    view.trials_spin.setValue(10)
    with qtbot.waitSignal(view.tuning_finished, timeout=30_000) as blocker:
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result.train_users == ("synth-a",) and result.test_users == ("synth-b", "synth-c")
    assert view.model.rowCount() == 10
    view.knob_combo.setCurrentText("mmr_lambda")
    xs, ys = view.plot.train_curve.getData()
    assert list(xs) == [p[0] for p in result.sensitivity["mmr_lambda"]]
    assert view.save_best("tuned-synth")
    assert store.get("tuned-synth") == result.best.config
    view.shutdown()


def synthetic_cv(users, metric, trials, folds, progress, cancel, pool_limits=True, space=None, on_trial=None,
                 test=()):
    qs = [q for q in tune_questions() if q.user_id in [*users, *test]]
    pools = recall_pools(lambda u, q, d: synthetic_pool(n_sessions=10, seed=zlib.crc32(q.encode()), user_id=u,
                                                        query=q), qs, 64)
    return cross_validate(pools, [q for q in qs if q.user_id in users], tune_tpe, "tpe", metric=metric, folds=folds,
                          trials=trials, sensitivity_points=3, progress=progress, cancel=cancel, on_trial=on_trial,
                          presets={"fusion_note": BUILTIN["fusion_note"], "bm25_only": BUILTIN["bm25_only"]},
                          start_name="memsense", test=[q for q in qs if q.user_id in test])


def answer_dialogs(monkeypatch, answer):
    """Answer the confirmation with `answer` and the name prompt with "cv"; return the questions asked."""
    asked = []

    def question(parent, title, text, *args):
        asked.append(text)
        return answer

    monkeypatch.setattr(QMessageBox, "question", question)
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("cv", True))
    return asked


def test_cross_validation_shows_each_fold_and_asks_before_saving_a_config_that_did_not_generalise(
        qtbot, tmp_path, monkeypatch):
    store = PresetStore(tmp_path / "presets.json")
    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS, save_preset=store.save, cross_validate=synthetic_cv)
    qtbot.addWidget(view)
    view.show()
    assert view.folds_spin.value() == 3  # 3 users: one fold per user
    view.trials_spin.setValue(1)  # one trial per fold is the start itself: the held-out gain is exactly zero
    with qtbot.waitSignal(view.tuning_finished, timeout=30_000) as blocker:
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    cv = blocker.args[0]
    assert isinstance(cv, CrossValidation) and len(cv.folds) == 3 and cv.gain == 0 and not cv.generalises
    lines = view.folds_text.toPlainText().splitlines()
    assert view.folds_text.isVisible() and lines[0].startswith("Choice by cross-validated recall_all@4")
    for c in cv.choice.contenders:  # the start and each preset beside the search, the chosen one marked
        assert any(line.startswith(f"  {c.name}: {c.mean:.3f} ± {c.se:.3f}") for line in lines)
    assert sum("← chosen" in line for line in lines) == 1 and any(line.startswith("Why: ") for line in lines)
    folds = [line for line in lines if line.startswith("fold ")]
    for line, fold in zip(folds, cv.folds, strict=True):
        assert f"held-out {fold.start_held:.3f} → {fold.held:.3f}" in line and f"train {fold.start_train:.3f}" in line
    assert f"pooled {cv.cv_metric:.3f}" in lines[-1]
    lo, hi = cv.gain_ci
    assert f"95 % CI {lo:+.3f} to {hi:+.3f}" in view.status.text()
    assert "not above zero" in view.status.text() and "Saving asks first" in view.status.text()
    asked = answer_dialogs(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and "+0.000" in asked[0] and "cv" not in store.all()
    asked = answer_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and store.get("cv") == cv.final.best.config
    view.shutdown()


def test_cross_validated_search_feeds_importances_to_the_sensitivity_view(qtbot, tmp_path, monkeypatch):
    store = PresetStore(tmp_path / "presets.json")
    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS, save_preset=store.save, cross_validate=synthetic_cv)
    qtbot.addWidget(view)
    view.show()
    view.folds_spin.setValue(2)
    view.trials_spin.setValue(12)
    with qtbot.waitSignal(view.tuning_finished, timeout=60_000) as blocker:
        view.start()
    cv = blocker.args[0]
    assert len(cv.folds) == 2 and len(cv.final.trials) == 12
    assert view.model.rowCount() == sum(f.trials for f in cv.folds) + 12  # every fold's trials, then the final search's
    assert [t for run, t in view.model.rows if run == "all users"] == list(cv.final.trials)
    assert cv.final.importances  # 12 TPE trials over the synthetic pools differ
    knob, weight = max(cv.final.importances.items(), key=lambda kv: kv[1])
    assert f"{knob} {weight:.2f}" in view.importance_label.text()
    view.knob_combo.setCurrentText(knob)
    assert f"importance {weight:.2f}" in view.plot.plotItem.titleLabel.text
    asked = answer_dialogs(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    assert bool(asked) == (cv.gain <= 0)  # asks exactly when the cross-validated gain is not above zero
    assert ("cv" in store.all()) == (cv.gain > 0)
    view.shutdown()


def test_cancelling_a_cross_validation_chooses_by_the_rule_over_the_folds_done(qtbot, tmp_path):
    """Cancel in fold 1 of 2: the fold's search stops with the trials it scored, no search runs on every
    user, and the offer is the rule's choice among the start and the presets on fold 1's held-out users,
    never the fold's own best (trained on the other users alone); the status says what it rests on."""
    store = PresetStore(tmp_path / "presets.json")
    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS, save_preset=store.save, cross_validate=synthetic_cv)
    qtbot.addWidget(view)
    view.show()
    view.folds_spin.setValue(2)
    view.trials_spin.setValue(5000)
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.model.rowCount() >= 3, timeout=60_000)
    with qtbot.waitSignal(view.tuning_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    cv = blocker.args[0]
    assert isinstance(cv, CrossValidation) and cv.cancelled and len(cv.folds) == 1
    assert {c.kind for c in cv.choice.contenders} == {"start", "preset"}  # no search on every user to offer
    assert cv.trials_done == cv.folds[0].trials == len(view.feed.runs["fold 1"])
    assert f"1 of 2 folds, {cv.trials_done} trials" in view.status.text()
    assert f"Apply best… applies {cv.chosen.name}" in view.status.text()
    with qtbot.waitSignal(view.apply_requested) as applied:
        qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert applied.args[0] == cv.best == cv.chosen.config and cv.chosen.kind in ("start", "preset")
    view.shutdown()


def test_folds_use_every_user_and_a_split_tunes_on_the_ticked_users(qtbot, tmp_path):
    """With folds the user lists are disabled and a line says folds use every user; with a split and two
    training users the choice is cross-validated over the ticked training users alone and the ticked
    held-out user is reported, never trained on."""
    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS, cross_validate=synthetic_cv)
    qtbot.addWidget(view)
    view.show()
    assert view.folds_spin.value() == 3
    assert not view.train_list.isEnabled() and not view.test_list.isEnabled() and view.users_note.isVisible()
    view.folds_spin.setValue(1)  # the train/test split
    assert view.train_list.isEnabled() and view.test_list.isEnabled() and not view.users_note.isVisible()
    for box, ticked in ((view.train_list, {"synth-a", "synth-b"}), (view.test_list, {"synth-c"})):
        for i in range(box.count()):
            item = box.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in ticked else Qt.CheckState.Unchecked)
    view.trials_spin.setValue(4)
    with qtbot.waitSignal(view.tuning_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    cv = blocker.args[0]
    assert isinstance(cv, CrossValidation) and cv.test_users == ("synth-c",)
    assert sorted(u for f in cv.folds for u in f.held_users) == ["synth-a", "synth-b"]
    assert all("synth-c" not in f.train_users for f in cv.folds) and "synth-c" not in cv.final.train_users
    assert set(cv.test_scores) == {c.name for c in cv.choice.contenders}
    text = view.folds_text.toPlainText()
    assert "on held-out synth-c" in text and f"held-out users {cv.test_scores[cv.chosen.name]:.3f}" in text
    view.shutdown()


def _trials(n: int, start: int = 0):
    import numpy as np

    from core.config import Config
    from core.evaluation.tune import ALL_KNOBS, Trial

    rng = np.random.default_rng(start)
    out = []
    for number in range(start, start + n):
        cfg = Config()
        for knob in ALL_KNOBS[:5]:
            cfg = knob.set(cfg, knob.draw(rng))
        out.append(Trial(number, "tpe", cfg, float(rng.random()), float(rng.random()), float(rng.random())))
    return out


def test_a_fast_search_is_shown_at_most_every_refresh_and_nothing_waits_after_it(qtbot, monkeypatch):
    """Reports faster than `REFRESH_MS` are shown once per interval, the newest, with the trials
    scored since the last look; when the search ends, no report is left to show late."""
    from memsense_gui.state.trial_feed import SPLIT_RUN
    from memsense_gui.views import autotune

    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS)
    qtbot.addWidget(view)
    view.show()
    looks = []
    take = view._take_trials
    monkeypatch.setattr(view, "_take_trials", lambda: (looks.append(view.feed.count), take()))
    view._reset_run()
    for trial in _trials(40):
        view.feed.add(SPLIT_RUN, trial)
        view._progressed(trial.number + 1, 40, f"trial {trial.number}")
    assert looks == [] and view.model.rowCount() == 0  # nothing redrawn yet: one look is due
    qtbot.waitUntil(lambda: view.model.rowCount() == 40, timeout=5 * autotune.REFRESH_MS)
    assert len(looks) == 1 and view.progress.value() == 40 and "trial 39" in view.progress.format()
    for trial in _trials(5, start=40):
        view.feed.add(SPLIT_RUN, trial)
        view._progressed(trial.number + 1, 45, f"trial {trial.number}")
    qtbot.waitUntil(lambda: view.model.rowCount() == 45, timeout=5 * autotune.REFRESH_MS)
    assert len(looks) == 2 and view.progress.value() == 45  # the bar and the table agree
    view._progressed(45, 45, "trial 44")
    view._stop()  # the search ended: its pending report is dropped, not shown after
    qtbot.wait(2 * autotune.REFRESH_MS)
    assert len(looks) == 2 and not view.progress.isVisible()


def test_a_refresh_reads_the_rows_in_sight_however_many_trials_there_are(qtbot):
    """Marking the best and fitting the columns read the cells in sight and the best's rows, not
    every trial's (sorted by the objective, as one watches a search): a refresh at 400 trials
    reads about what one at 20 does."""
    from memsense_gui.state.trial_feed import SPLIT_RUN

    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS)
    qtbot.addWidget(view)
    view.resize(1280, 700)
    view.show()
    model = view.model
    view.table.sortByColumn(model.TRAIN, Qt.SortOrder.DescendingOrder)  # best first, as one watches a search
    reads = []
    data = type(model).data
    model.data = lambda index, role=0: (reads.append(1), data(model, index, role))[1]  # type: ignore[method-assign]

    def refresh_reads(trials) -> int:
        for trial in trials:
            view.feed.add(SPLIT_RUN, trial)
        qtbot.wait(100)  # the last refresh's own repaints done first (a loaded machine defers them): not counted here
        reads.clear()
        view._report = (trials[-1].number + 1, 1000, f"trial {trials[-1].number}")
        view._show_report()
        qtbot.wait(50)  # the repaint
        return len(reads)

    refresh_reads(_trials(20))
    few = refresh_reads(_trials(5, start=20))
    refresh_reads(_trials(375, start=25))
    many = refresh_reads(_trials(5, start=400))
    assert model.rowCount() == 405
    assert many < 3 * few, (few, many)


def test_the_steps_after_the_trials_show_without_the_trials_eta(qtbot):
    """After the last trial the bar follows the sweep of each knob, then names the importances on
    an empty bar; the ETA, a figure of the trials' rate, is not left on screen."""
    from memsense_gui.state.trial_feed import SPLIT_RUN

    view = AutoTuneView(tune=synthetic_tune, users=lambda: USERS)
    qtbot.addWidget(view)
    view.show()
    view._reset_run()
    for trial in _trials(12):
        view.feed.add(SPLIT_RUN, trial)
        view._report = (trial.number + 1, 12, f"trial {trial.number}: train 0.5, best 0.6")
        view._show_report()
        qtbot.wait(20)
    assert "trials/s" in view.eta_label.text()
    view._report = (3, 21, "sensitivity to alpha")
    view._show_report()
    assert view.eta_label.text() == "" and (view.progress.value(), view.progress.maximum()) == (3, 21)
    assert view.progress.format().startswith("sensitivity to alpha")
    view._report = (0, 0, "importance of each knob (fANOVA)")
    view._show_report()
    assert (view.progress.value(), view.progress.maximum()) == (0, 1)
    assert view.progress.format() == "importance of each knob (fANOVA)" and view.progress.text() == view.progress.format()
