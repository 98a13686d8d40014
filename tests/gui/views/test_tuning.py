"""The tuning panel through qtbot: sliders, exact entry, tooltips with defaults, presets."""
from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from core.config import BOUNDS, EXPORT_NAMES, Config
from core.config.presets import BUILTIN, PresetStore
from memsense_gui.views.sliders import ALL_KNOBS, WEIGHT_KNOBS
from memsense_gui.state.current_settings import CurrentSettings
from memsense_gui.state.presets import PresetLibrary
from memsense_gui.views.tuning import TuningPanel
from tests.gui.fixtures import panel_shows


@pytest.fixture
def panel(qtbot, tmp_path):
    p = TuningPanel(PresetLibrary(PresetStore(tmp_path / "presets.json")), CurrentSettings())
    qtbot.addWidget(p)
    p.show()
    return p


def test_every_issue_knob_has_a_slider():
    wanted = {"mmr_lambda", "duplicate_threshold", "alpha", "rrf_k", "turn_support_cap", "turn_support_factor", "top_k"}
    assert wanted <= set(ALL_KNOBS)
    assert {k.route for k in WEIGHT_KNOBS} == set(Config().route_weights)


def test_tooltips_say_what_and_the_memsense_default(panel):
    default = Config()
    for name, knob in ALL_KNOBS.items():
        tip = panel.sliders[name].toolTip()
        value = knob.value(default)
        assert f"Memsense default: {value:g}" in tip if isinstance(value, float) else f"Memsense default: {value}" in tip
        assert knob.export in tip and knob.help[:20] in tip
    assert EXPORT_NAMES["mmr_lambda"] in panel.sliders["mmr_lambda"].toolTip()


def test_sliders_show_the_config_and_ranges_follow_bounds(panel):
    for name, slider in panel.sliders.items():
        knob = ALL_KNOBS[name]
        assert slider.value() == pytest.approx(knob.value(Config()))
        assert (slider.minimum(), slider.maximum()) == pytest.approx(knob.bounds)
    assert ALL_KNOBS["rrf_k"].bounds == BOUNDS["rrf_k"]


def test_moving_a_slider_changes_the_current_settings(qtbot, panel):
    with qtbot.waitSignal(panel.current.changed) as blocker:
        panel.set_knob("mmr_lambda", 0.5)
    cfg, knob = blocker.args
    assert knob == "mmr_lambda" and cfg.mmr_lambda == 0.5
    assert cfg == replace(Config(), mmr_lambda=0.5) == panel.current.config
    with qtbot.waitSignal(panel.current.changed) as blocker:
        panel.set_knob("route_weights.lexical", 2.5)
    assert blocker.args[0].weight("lexical") == 2.5 and blocker.args[0].mmr_lambda == 0.5


def test_exact_numeric_entry_in_the_slider_label(qtbot, panel):
    slider = panel.sliders["duplicate_threshold"]
    label = slider._label  # superqt's editable spin box beside the slider
    with qtbot.waitSignal(panel.current.changed) as blocker:
        label.setFocus()
        label.selectAll()
        qtbot.keyClicks(label, "0.87")
        qtbot.keyClick(label, Qt.Key.Key_Return)
    assert blocker.args[0].duplicate_threshold == 0.87


def test_a_change_made_elsewhere_is_shown_and_edits_nothing(qtbot, panel):
    """Settings applied whole (or an undo) move the sliders without one edit of their own."""
    seen = []
    panel.current.changed.connect(lambda cfg, cause: seen.append(cause))
    cfg = replace(Config(), alpha=0.3, top_k=9, scheme="linear").with_weights(vec_full=0.0)
    panel.current.apply(cfg, "elsewhere")
    assert seen == ["apply"] and panel.current.stack.count() == 1 and panel_shows(panel, cfg)
    panel.current.stack.undo()
    assert seen == ["apply", "undo"] and panel_shows(panel, Config())
    panel.current.stack.redo()
    assert panel.sliders["alpha"].value() == pytest.approx(0.3)
    assert panel.sliders["top_k"].value() == 9
    assert panel.sliders["route_weights.vec_full"].value() == 0


def test_values_are_rounded_to_the_knob_precision(qtbot, panel):
    with qtbot.waitSignal(panel.current.changed) as blocker:
        panel.set_knob("alpha", 0.1 + 1e-9 + 0.05)
    assert blocker.args[0].alpha == 0.15


def test_presets_save_rename_delete_and_reset(qtbot, panel, tmp_path):
    assert set(BUILTIN) <= set(panel.presets.names())
    panel.set_knob("mmr_lambda", 0.6)
    assert panel.save_preset("mine")
    assert PresetStore(tmp_path / "presets.json").get("mine").mmr_lambda == 0.6
    assert panel.rename_preset("mine", "ours")
    assert PresetStore(tmp_path / "presets.json").names() == ["ours"]
    with qtbot.waitSignal(panel.current.changed) as blocker:
        panel.apply_preset("memsense")
    assert blocker.args == [Config(), "preset:memsense"]
    assert panel.sliders["mmr_lambda"].value() == pytest.approx(Config().mmr_lambda)
    assert panel.delete_preset("ours")
    assert PresetStore(tmp_path / "presets.json").names() == []


def test_preset_errors_are_raised_as_signals_not_crashes(qtbot, panel):
    with qtbot.waitSignal(panel.error_raised) as blocker:
        panel.save_preset("memsense")
    assert "built-in" in str(blocker.args[0])
    with qtbot.waitSignal(panel.error_raised):
        panel.delete_preset("memsense")


def test_every_builtin_preset_can_be_applied(qtbot, panel):
    for name, cfg in BUILTIN.items():
        panel.apply_preset(name)
        assert panel.current.config == cfg and panel_shows(panel, cfg)
        assert panel.scheme_combo.currentText() == cfg.scheme
        assert "differ" not in panel.modified_label.text()
    panel.set_knob("alpha", 0.5)
    assert "differ" in panel.modified_label.text()


def _wheel(widget, steps: int = 3) -> None:
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    pos = QPointF(widget.rect().center())
    event = QWheelEvent(pos, QPointF(widget.mapToGlobal(pos.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_moves_a_slider_only_when_it_has_focus(qtbot, panel):
    from PySide6.QtWidgets import QAbstractSlider

    panel.show()
    qtbot.waitExposed(panel)
    outer = panel.sliders["mmr_lambda"]
    inner = outer.findChild(QAbstractSlider)
    before = outer.value()
    _wheel(inner)
    assert outer.value() == before  # unfocused: the panel scrolls, the knob stays
    inner.setFocus()
    qtbot.waitUntil(inner.hasFocus)
    _wheel(inner)
    assert outer.value() != before
