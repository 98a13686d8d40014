"""The auto-tuning panel over a synthetic tuning run: history, sensitivity plot, save as preset."""
from __future__ import annotations


from PySide6.QtCore import Qt

from core.config.presets import PresetStore
from memsense_gui.views.autotune import AutoTuneView
from tests.gui.fixtures import TUNE_USERS as USERS, synthetic_tune


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
