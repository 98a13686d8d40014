"""The look every plot shares: themed axes and legend text."""
from __future__ import annotations

import pyqtgraph as pg

from memsense_gui import theme


def style_plot(item: pg.PlotItem) -> None:
    t = theme.current()
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(t.muted))
        axis.setTextPen(pg.mkPen(t.text))
        axis.enableAutoSIPrefix(False)


def legend_color(legend: pg.LegendItem, color: str) -> None:
    legend.setLabelTextColor(color)
    for _sample, label in legend.items:
        label.setText(label.text, color=color)
