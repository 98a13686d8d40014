"""Per-category bars of one metric: one group per category (and \"all\"), one bar per preset."""
from __future__ import annotations

from typing import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QSize

from core.evaluation.evaluate import PresetEvaluation, category_name
from memsense_gui import theme
from memsense_gui.plots.export import MIN_SIZE
from memsense_gui.plots.style import theme_plot


PRESET_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac")


class CategoryBars(pg.PlotWidget):
    """Grouped bars: one group per category (and "all"), one bar per preset."""

    GROUP_WIDTH = 0.8
    LEGEND_ROW_PIXELS = 20
    BARS_LEAST_PIXELS = 110
    """Height the bars keep below the legend; the widget's minimum height adds the legend and axis."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.showGrid(x=False, y=True, alpha=0.25)
        self.top = 1.18
        self.setYRange(0, self.top, padding=0)
        self.bars: list[pg.BarGraphItem] = []
        self.legend = self.addLegend(offset=(10, 5), labelTextSize="9pt", colCount=4)
        self.values: dict[str, list[float]] = {}
        self.groups: list[str] = []
        self.apply_theme()

    def apply_theme(self, _theme: theme.Theme | None = None) -> None:
        theme_plot(self, self.getPlotItem(), self.legend)

    def _bar(self, i: int) -> pg.BarGraphItem:
        while len(self.bars) <= i:
            color = PRESET_COLORS[len(self.bars) % len(PRESET_COLORS)]
            bar = pg.BarGraphItem(x=[], height=[], width=0.1, brush=color, pen=pg.mkPen(None))
            self.addItem(bar)
            self.bars.append(bar)
        return self.bars[i]

    def set_results(self, results: Sequence[PresetEvaluation], metric: str) -> None:
        cats = sorted({c for r in results for c in r.per_category})
        self.groups = ["all"] + [f"{c} {category_name(c)}" for c in cats]
        n = max(len(results), 1)
        width = self.GROUP_WIDTH / n
        self.legend.clear()
        self.values = {}
        for i, r in enumerate(results):
            heights = [r.overall.get(metric, 0.0)] + [r.per_category.get(c, {}).get(metric, 0.0) for c in cats]
            xs = [g - self.GROUP_WIDTH / 2 + width * (i + 0.5) for g in range(len(self.groups))]
            bar = self._bar(i)
            bar.setOpts(x=xs, height=heights, width=width * 0.92)
            bar.setVisible(True)
            self.legend.addItem(bar, r.preset)
            self.values[r.preset] = heights
        for bar in self.bars[len(results):]:
            bar.setOpts(x=[], height=[])
            bar.setVisible(False)
        self.getAxis("bottom").setTicks([list(enumerate(self.groups))])
        self.setXRange(-0.6, max(len(self.groups) - 0.4, 0.6), padding=0)
        self.setLabel("left", metric)
        self.setMinimumHeight(self._legend_pixels() + self.BARS_LEAST_PIXELS + 50)
        self._make_room()

    def export_size(self) -> QSize:
        """The size the bars are exported at, on screen or not: wide enough for every group's
        bars and tall enough for the legend over the bars (at least MIN_SIZE)."""
        presets = max(len(self.values), 1)
        width = 80 + len(self.groups) * max(150, 26 * presets)
        return QSize(width, self._legend_pixels() + 3 * self.BARS_LEAST_PIXELS + 50).expandedTo(MIN_SIZE)

    def _legend_pixels(self) -> int:
        """The legend's height as drawn (its offset included), or as estimated before it is laid out."""
        drawn = self.legend.boundingRect().height()
        rows = -(-len(self.legend.items) // 4)  # four columns
        return int(max(drawn, rows * self.LEGEND_ROW_PIXELS)) + 10

    def _make_room(self) -> None:
        """Raise the top of the value axis so the legend sits above the tallest bar (value 1)."""
        plot = self.getPlotItem()
        plot_px = plot.vb.height() if plot is not None else 0
        if plot_px <= 0:
            return
        legend = min(self._legend_pixels() / plot_px, 0.6)
        top = max(1.18, 1.02 / (1 - legend))
        if abs(top - self.top) > 1e-3:
            self.top = top
            self.setYRange(0, top, padding=0)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if hasattr(self, "legend"):  # pyqtgraph resizes the widget before __init__ is done
            self._make_room()
