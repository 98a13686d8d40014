"""Undo and redo of knob changes and preset choices through the real window."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.config import Config
from core.config.presets import BUILTIN
from tests.gui.fixtures import panel_shows


def test_a_drag_is_one_step_and_undo_redo_restore_it(qtbot, ranked_window):
    w = ranked_window
    session, tuning = w.ctx.session, w.tuning
    current = w.ctx.current
    start = current.config
    for value in (0.7, 0.6, 0.5):  # one drag: three ticks of one slider
        tuning.sliders["mmr_lambda"].setValue(value)
    tuning.sliders["rrf_k"].setValue(30.0)
    current.flush()
    assert w.ctx.current.stack.count() == 2 and current.config.mmr_lambda == 0.5 and current.config.rrf_k == 30.0
    w.ctx.current.stack.undo()
    assert current.config.rrf_k == start.rrf_k and current.config.mmr_lambda == 0.5
    w.ctx.current.stack.undo()
    assert current.config == start and panel_shows(tuning, start)
    assert tuning.sliders["mmr_lambda"].value() == start.mmr_lambda
    w.ctx.current.stack.redo()
    assert current.config.mmr_lambda == 0.5 and session.ranking.config == current.config


def test_choosing_a_preset_applies_it_and_undo_takes_it_back(qtbot, ranked_window):
    w = ranked_window
    combo = w.tuning.preset_combo
    before = w.ctx.current.config
    combo.activated.emit(combo.findText("bm25_only"))  # the diff first: nothing changes until Apply
    dialog = w.applying.dialog
    assert dialog.isVisible() and w.ctx.current.config == before
    qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    assert w.ctx.current.config == BUILTIN["bm25_only"] and w.ctx.current.stack.count() == 1
    qtbot.keyClick(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.ctx.current.config == before == Config()


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
    current, slider = w.ctx.current, w.tuning.sliders["mmr_lambda"]
    start = current.config.mmr_lambda
    _drag(qtbot, slider, -20)
    current.flush()
    after_first = current.config.mmr_lambda
    _drag(qtbot, slider, -20)
    current.flush()
    assert start > after_first > current.config.mmr_lambda
    assert w.ctx.current.stack.count() == 2
    w.ctx.current.stack.undo()
    assert current.config.mmr_lambda == after_first and panel_shows(w.tuning, current.config)
    w.ctx.current.stack.undo()
    assert current.config.mmr_lambda == start


def test_a_second_drag_shows_movement_since_the_first(qtbot, ranked_window):
    """The caption says "Moved: since the last change": after two drags of one slider less than a second apart, the
    movement column is measured against the ranking the first drag left, as undo's steps are."""
    w = ranked_window
    session, slider = w.ctx.session, w.tuning.sliders["mmr_lambda"]
    current = w.ctx.current
    _drag(qtbot, slider, -20)
    current.flush()
    first = session.ranking
    _drag(qtbot, slider, -20)
    current.flush()
    assert session.ranking.config.mmr_lambda < first.config.mmr_lambda
    assert session.baseline is first


def test_two_typed_values_are_two_steps(qtbot, ranked_window):
    """A value typed in a slider's box and entered, then another: undo takes back only the second."""
    from PySide6.QtWidgets import QLineEdit

    w = ranked_window
    current, slider = w.ctx.current, w.tuning.sliders["mmr_lambda"]
    box = slider.findChild(QLineEdit)
    for text in ("0.60", "0.40"):
        box.setFocus()
        box.selectAll()
        qtbot.keyClicks(box, text)
        qtbot.keyClick(box, Qt.Key.Key_Return)
    current.flush()
    assert current.config.mmr_lambda == 0.4 and w.ctx.current.stack.count() == 2
    w.ctx.current.stack.undo()
    assert current.config.mmr_lambda == 0.6
