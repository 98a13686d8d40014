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


def _drag(qtbot, slider, dx: int) -> None:
    """Press the slider's handle, move it `dx` pixels in a few steps, release: one drag as a user makes it."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QSlider, QStyle, QStyleOptionSlider

    inner = slider.findChild(QSlider)
    opt = QStyleOptionSlider()
    inner.initStyleOption(opt)
    x0 = inner.style().subControlRect(QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderHandle,
                                      inner).center().x()
    y = inner.height() // 2
    qtbot.mousePress(inner, Qt.MouseButton.LeftButton, pos=QPoint(x0, y))
    for i in range(1, 5):
        qtbot.mouseMove(inner, QPoint(x0 + dx * i // 4, y))
    qtbot.mouseRelease(inner, Qt.MouseButton.LeftButton, pos=QPoint(x0 + dx, y))


def test_two_drags_of_one_slider_are_two_steps(qtbot, ranked_window):
    """Undo after a second drag of the same slider takes it back to where that drag began, not the first."""
    w = ranked_window
    session, slider = w.ctx.session, w.tuning.sliders["mmr_lambda"]
    start = session.config.mmr_lambda
    _drag(qtbot, slider, -20)
    session.flush()
    after_first = session.config.mmr_lambda
    _drag(qtbot, slider, -20)
    session.flush()
    assert start > after_first > session.config.mmr_lambda
    assert w.undo.stack.count() == 2
    w.undo.stack.undo()
    assert session.config.mmr_lambda == after_first and w.tuning.config.mmr_lambda == after_first
    w.undo.stack.undo()
    assert session.config.mmr_lambda == start


def test_a_second_drag_shows_movement_since_the_first(qtbot, ranked_window):
    """The caption says "Moved: since the last change": after two drags of one slider less than a second apart, the
    movement column is measured against the ranking the first drag left, as undo's steps are."""
    w = ranked_window
    session, slider = w.ctx.session, w.tuning.sliders["mmr_lambda"]
    _drag(qtbot, slider, -20)
    session.flush()
    first = session.ranking
    _drag(qtbot, slider, -20)
    session.flush()
    assert session.ranking.config.mmr_lambda < first.config.mmr_lambda
    assert session.baseline is first


def test_two_typed_values_are_two_steps(qtbot, ranked_window):
    """A value typed in a slider's box and entered, then another: undo takes back only the second."""
    from PySide6.QtWidgets import QLineEdit

    w = ranked_window
    session, slider = w.ctx.session, w.tuning.sliders["mmr_lambda"]
    box = slider.findChild(QLineEdit)
    for text in ("0.60", "0.40"):
        box.setFocus()
        box.selectAll()
        qtbot.keyClicks(box, text)
        qtbot.keyClick(box, Qt.Key.Key_Return)
    session.flush()
    assert session.config.mmr_lambda == 0.4 and w.undo.stack.count() == 2
    w.undo.stack.undo()
    assert session.config.mmr_lambda == 0.6
