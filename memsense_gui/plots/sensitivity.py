"""Train and test metric against one knob, the others at the best config."""
from __future__ import annotations

from typing import Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt

from memsense_gui import theme
from memsense_gui.plots.style import theme_plot


class SensitivityPlot(pg.PlotWidget):
    """Train and test metric against one knob (the others at the best config); curves are
    created once and updated with setData."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.legend = self.addLegend(offset=(-10, 10), labelTextSize="9pt")
        self.train_curve = self.plot([], [], pen=pg.mkPen("#4e79a7", width=2), symbol="o", symbolSize=6,
                                     symbolBrush="#4e79a7", name="train")
        self.test_curve = self.plot([], [], pen=pg.mkPen("#e15759", width=2, style=Qt.PenStyle.DashLine),
                                    symbol="s", symbolSize=6, symbolBrush="#e15759", name="test")
        self.best_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#7f7f7f", style=Qt.PenStyle.DotLine))
        self.addItem(self.best_line)
        self.apply_theme()
        theme.on_change(self.apply_theme)

    def apply_theme(self, _theme: theme.Theme | None = None) -> None:
        theme_plot(self, self.getPlotItem(), self.legend)

    def set_points(self, knob: str, points: Sequence[tuple[float, float, float | None]], best: float,
                   metric: str, importance: float | None = None) -> None:
        xs = [p[0] for p in points]
        self.train_curve.setData(xs, [p[1] for p in points])
        tests = [(p[0], p[2]) for p in points if p[2] is not None]
        self.test_curve.setData([x for x, _ in tests], [y for _, y in tests])
        self.best_line.setValue(best)
        self.setLabel("bottom", knob)
        self.setLabel("left", metric)
        self.setLogMode(x=knob == "rrf_k", y=False)
        self.setTitle(None if importance is None else f"{knob}: importance {importance:.2f} (Optuna fANOVA)",
                      size="9pt")
