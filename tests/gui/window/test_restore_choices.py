"""The chosen preset and the pinned baseline come back when the app is opened again; a preset
gone since falls back with one status line."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.config.presets import BUILTIN
from memsense_gui.state import paths
from memsense_gui.window.restore_choices import PRESET_KEY

CLICK = Qt.MouseButton.LeftButton


def _menu_action(menu, text):
    menu.aboutToShow.emit()
    return next(a for a in menu.actions() if a.text() == text)


def test_preset_and_baseline_survive_a_restart(qtbot, make_window):
    w = make_window()
    combo = w.tuning.preset_combo
    combo.setCurrentIndex(combo.findText("bm25_only"))
    combo.activated.emit(combo.findText("bm25_only"))
    qtbot.mouseClick(w.applying.dialog.apply_button, CLICK)
    bar = w.baseline_bar
    _menu_action(bar.menu, "Preset").menu().actions()[[*w.ctx.presets.names()].index("memsense")].trigger()
    assert w.ctx.session.pinned_baseline.label == "preset “memsense”"
    w.close()

    again = make_window()
    assert again.tuning.preset_combo.currentText() == "bm25_only" and again.ctx.current.config == BUILTIN["bm25_only"]
    assert "Settings differ" not in again.tuning.modified_label.text()
    pinned = again.ctx.session.pinned_baseline
    assert pinned is not None and pinned.label == "preset “memsense”" and pinned.config == BUILTIN["memsense"]
    assert "against preset “memsense”" in again.baseline_bar.label.text()
    again.ctx.session.unpin_baseline()
    again.close()
    third = make_window()
    assert third.ctx.session.pinned_baseline is None


def test_a_snapshot_baseline_comes_back_with_its_settings(qtbot, make_window):
    w = make_window()
    w.tuning.set_knob("mmr_lambda", 0.42)
    w.ctx.current.flush()
    w.baseline_bar.pin_snapshot()
    label = w.ctx.session.pinned_baseline.label
    w.tuning.set_knob("mmr_lambda", 0.6)
    w.ctx.current.flush()
    w.close()
    again = make_window()
    pinned = again.ctx.session.pinned_baseline
    assert pinned.label == label and pinned.config.mmr_lambda == 0.42 and again.ctx.current.config.mmr_lambda == 0.6


def test_a_preset_gone_since_falls_back_with_one_status_line(qtbot, make_window, app_home):
    w = make_window()
    assert w.tuning.save_preset("mine")
    w.baseline_bar.pin_preset("mine")
    w.close()
    settings = paths.settings(app_home)
    assert settings.value(PRESET_KEY) == "mine"
    w2 = make_window()
    w2.tuning.delete_preset("mine")  # deleted (or renamed) before the next start
    w2.close()
    settings.setValue(PRESET_KEY, "mine")
    settings.sync()
    again = make_window()
    message = again.statusBar().currentMessage()
    assert again.tuning.preset_combo.currentText() == "memsense" and again.ctx.session.pinned_baseline is None
    assert "“mine” chosen last time is gone" in message and "baseline preset “mine” is gone" in message
    assert "\n" not in message
