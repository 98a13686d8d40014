"""The look every plot shares: themed axes and legend text, plain numbers on the axes."""
from __future__ import annotations

import pyqtgraph as pg

from memsense_gui import theme


def plain_numbers(axis: pg.AxisItem) -> None:
    """Tick labels in the data's own units: 0–0.8 stays 0–0.8, never 0–800 with a hidden "m".

    pyqtgraph scales a unit-less axis whose range lies in (0, 1] by 1000, and its
    `enableAutoSIPrefix(False)` recomputes that scale instead of resetting it; with no range
    where a prefix is allowed the scale is always 1."""
    axis.setSIPrefixEnableRanges(())
    axis.enableAutoSIPrefix(False)


def style_plot(item: pg.PlotItem) -> None:
    t = theme.current()
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(t.muted))
        axis.setTextPen(pg.mkPen(t.text))
        plain_numbers(axis)


def theme_plot(widget: pg.GraphicsView, plot: pg.PlotItem, legend: pg.LegendItem) -> None:
    """The current theme on a plot widget: its background, its plot's axes, its legend's text."""
    t = theme.current()
    widget.setBackground(t.base)
    style_plot(plot)
    legend_color(legend, t.text)


def legend_color(legend: pg.LegendItem, color: str) -> None:
    """Recolour the legend's labels, the ones it has and the ones added later (pyqtgraph's
    `setLabelTextColor` only records the colour; the text keeps the old one until re-set)."""
    legend.setLabelTextColor(color)
    for _sample, label in legend.items:
        label.setText(label.text, color=color)
