"""The auto-tuning panel: trial model under qtmodeltester, a synthetic tuning run (history,
sensitivity plot, save as preset), and the panel inside the real window's Evaluation view."""
from __future__ import annotations

import json
import zlib

import pytest
from PySide6.QtCore import Qt

from core.evaluate import recall_pools
from core.presets import PresetStore
from core.synthetic import synthetic_pool
from core.tune import split_users, tune
from core.types import Question
from memsense_gui.autotune import AutoTuneView, TrialModel
from memsense_gui.evaluation import install

USERS = ("synth-a", "synth-b", "synth-c")


def questions(n=5):
    return [Question(f"{u}:q{i}", u, f"question {i} for {u}", "", 1 + i % 4, (1 + i % 10, 1 + (i + 3) % 10))
            for u in USERS for i in range(n)]


def synthetic_tune(train, test, metric, trials, progress, cancel):
    qs = questions()
    pools = recall_pools(lambda u, q, d: synthetic_pool(n_sessions=10, seed=zlib.crc32(q.encode()), user_id=u,
                                                        query=q), qs, 64)
    tr, te = split_users(qs, train, test)
    return tune(pools, tr, te, metric, trials=trials, sensitivity_points=3, progress=progress, cancel=cancel)


@pytest.fixture(scope="module")
def result():
    return synthetic_tune(["synth-a"], ["synth-b"], "recall_all@4", 8, None, None)


def test_trial_model_passes_modeltester(qtmodeltester, result):
    model = TrialModel()
    model.set_trials(result.trials, result.best.number)
    qtmodeltester.check(model)
    assert model.rowCount() == len(result.trials)
    assert model.index(0, 2).data(Qt.ItemDataRole.UserRole + 1) == result.trials[0].train


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


def test_autotune_tab_in_the_window(qtbot, make_window, tmp_path):
    window = make_window()
    view = install(window)
    items = [{"user": u, "question": f"question {i} for {u}", "answer": "", "category": 1, "evidence": [f"D{i + 1}:1"]}
             for u in window.users for i in range(4)]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    view.source.set_path(path)
    panel = view.autotune
    assert panel.ticked(panel.train_list) == [window.users[0]]
    panel.trials_spin.setValue(6)
    with qtbot.waitSignal(panel.tuning_finished, timeout=30_000) as blocker:
        panel.start()
    assert len(blocker.args[0].trials) == 6
    assert panel.save_best("from-window")
    assert "from-window" in window.presets.all()
