"""Every trial of an auto-tune as it is scored: the objective (train metric) per trial and the
best so far, one colour per run (the search, or each fold of a cross-validation)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from core.evaluation.tune import Trial
from memsense_gui import theme
from memsense_gui.plots.style import theme_plot

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")


class TrialHistoryPlot(pg.PlotWidget):
    """Objective per trial (dots) and best so far (a step line), per run; updated with setData."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.legend = self.addLegend(offset=(-10, -10), labelTextSize="8pt")
        self.setLabel("bottom", "trial")
        self.series: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self.apply_theme()
        theme.on_change(self.apply_theme)

    def apply_theme(self, _theme: theme.Theme | None = None) -> None:
        theme_plot(self, self.getPlotItem(), self.legend)

    def clear_runs(self, metric: str = "") -> None:
        for dots, line in self.series.values():
            self.removeItem(dots)
            self.removeItem(line)
        self.legend.clear()
        self.series = {}
        self.setLabel("left", f"{metric} (train)" if metric else "objective")

    def set_runs(self, runs: Mapping[str, Sequence[Trial]]) -> None:
        """Show these runs' trials (new runs get the next colour)."""
        for run, trials in runs.items():
            dots, line = self.series.get(run) or self._add(run)
            xs = np.array([t.number for t in trials], dtype=float)
            ys = np.array([t.train for t in trials], dtype=float)
            dots.setData(xs, ys)
            line.setData(xs, np.maximum.accumulate(ys) if len(ys) else ys)

    def data(self, run: str) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """(trial numbers, objectives) of the dots and of the best-so-far line of `run`."""
        dots, line = self.series[run]
        return dots.getData(), line.getData()

    def _add(self, run: str) -> tuple[pg.PlotDataItem, pg.PlotDataItem]:
        color = PALETTE[len(self.series) % len(PALETTE)]
        dots = self.plot([], [], pen=None, symbol="o", symbolSize=5, symbolPen=None, symbolBrush=color)
        line = self.plot([], [], pen=pg.mkPen(color, width=2), stepMode=None, name=f"{run}: best so far")
        line.setPen(pg.mkPen(color, width=2, style=Qt.PenStyle.SolidLine))
        self.series[run] = (dots, line)
        return dots, line
