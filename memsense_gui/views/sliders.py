"""One labeled slider per knob, grouped: every knob with a `group` in its declaration
(`core.config.KNOBS`), in declaration order. Labels, help, bounds, decimals and Memsense names
all come from that one declaration; this module only lays the sliders out and words their
tooltips.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QSizePolicy, QWidget
from superqt import QLabeledDoubleSlider, QLabeledSlider

from core.config import KNOBS, Config
from core.config.knobs import Knob

GROUP_ORDER = ("Diversity (MMR)", "Fusion and score", "Turn support", "Route weights")
"""The panel's order; a group declared by a new knob follows these, in declaration order."""
_GROUP_NAMES = tuple(dict.fromkeys((*GROUP_ORDER, *(k.group for k in KNOBS.values() if k.group))))
GROUPS: tuple[tuple[str, tuple[Knob, ...]], ...] = tuple(
    (group, tuple(k for k in KNOBS.values() if k.group == group)) for group in _GROUP_NAMES
)
ALL_KNOBS: dict[str, Knob] = {k.name: k for _, group in GROUPS for k in group}
WEIGHT_KNOBS: tuple[Knob, ...] = tuple(k for k in ALL_KNOBS.values() if k.is_weight)


def tooltip(knob: Knob) -> str:
    """What the knob does, its Memsense name, its default and its range."""
    default = knob.value(Config())
    lo, hi = knob.bounds
    return (f"<b>{knob.label}</b> <code>{knob.export}</code><br>{knob.help}<br>"
            f"<i>Memsense default: {_fmt(default)}</i> · range {_fmt(lo)}–{_fmt(hi)}")


def _fmt(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class WheelGuard(QObject):
    """Wheel over an unfocused slider or spin box scrolls the panel instead of moving the knob:
    the wheel reaches a control only after a click or Tab gave it focus."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget) or watched.hasFocus():
            return False
        area = watched.parent()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parent()
        if area is not None:
            QCoreApplication.sendEvent(area.verticalScrollBar(), event)
        return True


WHEEL_GUARD = WheelGuard()


def guard_wheel(widget: QWidget) -> None:
    """Apply `WheelGuard` to a control and its inner slider and spin box; focus by click or Tab only."""
    for w in (widget, *widget.findChildren(QAbstractSlider), *widget.findChildren(QAbstractSpinBox)):
        w.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        w.installEventFilter(WHEEL_GUARD)


Slider = QLabeledSlider | QLabeledDoubleSlider
"""A knob's slider: whole numbers, or decimals."""


def make_slider(knob: Knob) -> Slider:
    """superqt labeled slider; its label is a spin box for exact entry. The wheel moves it only
    while it has focus (`WheelGuard`)."""
    lo, hi = knob.bounds
    slider: Slider
    if knob.decimals == 0:
        slider = QLabeledSlider(Qt.Orientation.Horizontal)
        slider.setRange(int(lo), int(hi))
    else:
        slider = QLabeledDoubleSlider(Qt.Orientation.Horizontal)
        slider.setDecimals(knob.decimals)
        slider.setRange(float(lo), float(hi))
        slider.setSingleStep(10 ** -knob.decimals)
    slider.setToolTip(tooltip(knob))
    slider.setObjectName(f"knob:{knob.name}")
    slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    guard_wheel(slider)
    return slider
