"""Undo and redo of knob changes and preset choices through the real window."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.config import Config
from core.config.presets import BUILTIN


def test_a_drag_is_one_step_and_undo_redo_restore_it(qtbot, ranked_window):
    w = ranked_window
    session, tuning = w.ctx.session, w.tuning
    start = session.config
    for value in (0.7, 0.6, 0.5):  # one drag: three ticks of one slider
        tuning.sliders["mmr_lambda"].setValue(value)
    tuning.sliders["rrf_k"].setValue(30.0)
    session.flush()
    assert w.undo.stack.count() == 2 and session.config.mmr_lambda == 0.5 and session.config.rrf_k == 30.0
    w.undo.stack.undo()
    assert session.config.rrf_k == start.rrf_k and session.config.mmr_lambda == 0.5
    w.undo.stack.undo()
    assert session.config == start and tuning.config == start
    assert tuning.sliders["mmr_lambda"].value() == start.mmr_lambda
    w.undo.stack.redo()
    assert session.config.mmr_lambda == 0.5 and session.ranking.config == session.config


def test_choosing_a_preset_applies_it_and_undo_takes_it_back(qtbot, ranked_window):
    w = ranked_window
    combo = w.tuning.preset_combo
    before = w.ctx.session.config
    combo.activated.emit(combo.findText("bm25_only"))  # the diff first: nothing changes until Apply
    dialog = w.applying.dialog
    assert dialog.isVisible() and w.ctx.session.config == before
    qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    assert w.ctx.session.config == BUILTIN["bm25_only"] and w.undo.stack.count() == 1
    qtbot.keyClick(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.ctx.session.config == before == Config()
