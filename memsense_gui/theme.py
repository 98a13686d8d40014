"""Light and dark appearance: a Fusion palette plus the few colours the views add.

Colours that carry meaning (route colours, fates, movement, gold) are chosen to read on both
backgrounds; views ask `current()` when they paint and refresh on `ThemeNotifier.changed`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

from core.records import ROUTES

# Tableau 10: distinguishable, colour-blind aware, readable on light and dark.
ROUTE_COLORS: dict[str, str] = dict(zip(ROUTES, (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#17becf", "#d62fc4",  # the session routes (beyond Memsense): the cyan and a magenta far from every other
)))
MEMORY_COLOR = "#bab0ac"
TURN_SUPPORT_COLOR = "#9c755f"
OTHER_COLOR = "#7f7f7f"


@dataclass(frozen=True)
class Theme:
    dark: bool
    window: str
    base: str
    alt_base: str
    text: str
    muted: str
    accent: str  # the route-rank ramp's strong end
    highlight: str
    up: str  # moved up
    down: str  # moved down
    gold: str  # background of gold (judged relevant) rows
    selected: str
    duplicate: str
    fallback: str

    def qcolor(self, name: str) -> QColor:
        return QColor(getattr(self, name))


LIGHT = Theme(False, "#f3f3f3", "#ffffff", "#f6f7f9", "#1d1d1f", "#7a7a7a", "#1f5fa8", "#3874cb",
              "#1a7f37", "#c62828", "#fff3c4", "#1a7f37", "#b35900", "#7b3fa0")
DARK = Theme(True, "#202124", "#17181a", "#1f2023", "#e8e8e8", "#9a9a9a", "#6fa8ff", "#3d6fb6",
             "#5fd17a", "#ff6b6b", "#4a3f12", "#5fd17a", "#ffab4a", "#c99bf0")

_current = LIGHT


class ThemeNotifier(QObject):
    changed = Signal(object)  # Theme


notifier: ThemeNotifier | None = None


def _notifier() -> ThemeNotifier:
    """The one notifier, made on first need (a view may be built before the first `apply`)."""
    global notifier
    if notifier is None:
        notifier = ThemeNotifier(QApplication.instance())
    return notifier


def on_change(slot: Callable[[Theme], object]) -> None:
    """Call `slot(theme)` at every switch of appearance from now on, whether or not one was
    applied yet (a bound method is dropped with its object)."""
    _notifier().changed.connect(slot)


def current() -> Theme:
    return _current


def blend(a: str | QColor, b: str | QColor, t: float) -> QColor:
    """Linear mix of two colours: t = 0 gives a, t = 1 gives b."""
    ca, cb = QColor(a), QColor(b)
    t = min(1.0, max(0.0, t))
    rgb_a, rgb_b = (ca.redF(), ca.greenF(), ca.blueF()), (cb.redF(), cb.greenF(), cb.blueF())
    return QColor.fromRgbF(*(x + (y - x) * t for x, y in zip(rgb_a, rgb_b)))


def palette(theme: Theme) -> QPalette:
    p = QPalette()
    role = QPalette.ColorRole
    p.setColor(role.Window, QColor(theme.window))
    p.setColor(role.WindowText, QColor(theme.text))
    p.setColor(role.Base, QColor(theme.base))
    p.setColor(role.AlternateBase, QColor(theme.alt_base))
    p.setColor(role.Text, QColor(theme.text))
    p.setColor(role.Button, QColor(theme.window))
    p.setColor(role.ButtonText, QColor(theme.text))
    p.setColor(role.ToolTipBase, QColor(theme.base))
    p.setColor(role.ToolTipText, QColor(theme.text))
    p.setColor(role.PlaceholderText, QColor(theme.muted))
    p.setColor(role.Highlight, QColor(theme.highlight))
    p.setColor(role.HighlightedText, QColor("#ffffff"))
    p.setColor(role.Link, QColor(theme.accent))
    p.setColor(role.BrightText, QColor(theme.down))
    for r in (role.Text, role.WindowText, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, r, QColor(theme.muted))
    return p


class OutlinedStyle(QProxyStyle):
    """Fusion, with every check box and radio button outlined in the muted text colour. Fusion
    draws their edge a shade darker than the window: on the dark background an unchecked box
    was all but invisible (1.1:1 against the window), and on the light one it was under 3:1."""

    _MARKS = (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorRadioButton)

    def __init__(self) -> None:
        super().__init__("Fusion")

    def drawPrimitive(self, element: QStyle.PrimitiveElement, option: QStyleOption,  # noqa: N802 - Qt override
                      painter: QPainter, widget: QWidget | None = None) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element not in self._MARKS:
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QColor(_current.muted))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        edge = option.rect.adjusted(0, 0, -1, -1)
        if element == QStyle.PrimitiveElement.PE_IndicatorRadioButton:
            painter.drawEllipse(edge)
        else:
            painter.drawRect(edge)
        painter.restore()


def cell_style() -> QStyle:
    """A style for one table of cells (`views.tables.make_table`): plain Fusion, without
    `OutlinedStyle`'s Python override, which Qt called for every cell's panel and focus frame
    (a quarter of a table's paint: 8.9 against 6.4 ms for the route matrix's ~300 cells). Those
    tables hold no check box, the only thing the override draws. One per table: PySide deletes a
    style given to a widget with that widget (a shared one was gone with the first table)."""
    style = QStyleFactory.create("Fusion")
    if style is None:  # never in a Qt build: Fusion is compiled in
        raise RuntimeError("Qt has no Fusion style")
    return style


def apply(app: QApplication, dark: bool) -> Theme:
    """Switch the whole application to the light or dark appearance."""
    global _current
    _current = DARK if dark else LIGHT
    if not isinstance(app.style(), OutlinedStyle):
        app.setStyle(OutlinedStyle())
    app.setPalette(palette(_current))
    _notifier().changed.emit(_current)
    return _current
