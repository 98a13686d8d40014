"""The MMR terms per pick: the relevance term lambda · final against the diversity penalty
(1 − lambda) · max redundancy, and the mmr score that decided the pick."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pyqtgraph as pg

from core.rank.ranking import Ranking
from memsense_gui import theme
from memsense_gui.plots.export import PlotFile, export_plot
from memsense_gui.plots.style import theme_plot


class MMRPlot(pg.GraphicsLayoutWidget):
    """Per pick: relevance term up, diversity penalty down, the mmr score as a dot."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setLabel("bottom", "pick")
        self.plot.setLabel("left", "mmr terms")
        self.relevance = pg.BarGraphItem(x=[], height=[], width=0.6, brush=theme.ROUTE_COLORS["vec_full"],
                                         pen=pg.mkPen(None), name="lambda · final")
        self.penalty = pg.BarGraphItem(x=[], height=[], width=0.6, brush=theme.ROUTE_COLORS["vec_user"],
                                       pen=pg.mkPen(None), name="−(1 − lambda) · max redundancy")
        self.score = pg.ScatterPlotItem(x=[], y=[], size=9, symbol="d", name="mmr score")
        self.zero = pg.InfiniteLine(pos=0, angle=0)
        for item in (self.relevance, self.penalty, self.zero, self.score):
            self.plot.addItem(item)
        self.legend = pg.LegendItem(colCount=3, labelTextSize="9pt")
        self.addItem(self.legend, row=1, col=0)
        for item in (self.relevance, self.penalty, self.score):
            self.legend.addItem(item, item.name())
        self.apply_theme()

    def apply_theme(self) -> None:
        t = theme.current()
        theme_plot(self, self.plot, self.legend)
        self.zero.setPen(pg.mkPen(t.muted))
        self.score.setBrush(pg.mkBrush(t.text))
        self.score.setPen(pg.mkPen(None))

    def set_ranking(self, ranking: Ranking | None) -> None:
        steps = ranking.selection.steps if ranking is not None else ()
        lam = ranking.config.mmr_lambda if ranking is not None else 1.0
        x = np.arange(1, len(steps) + 1, dtype=float)
        finals = np.array([ranking.rows[s.row].final_score for s in steps]) if ranking is not None else np.zeros(0)
        red = np.array([s.max_redundancy for s in steps]) if steps else np.zeros(0)
        self.relevance.setOpts(x=x, height=lam * finals, width=0.6)
        self.penalty.setOpts(x=x, height=-(1 - lam) * red, width=0.6)
        mmr = lam * finals - (1 - lam) * red
        self.score.setData(x=x, y=mmr)
        self.plot.getAxis("bottom").setTicks([[(float(v), str(int(v))) for v in x], []])
        top = float(max((lam * finals).max(initial=0), 0.01))
        bottom = float(min((-(1 - lam) * red).min(initial=0), 0))
        self.plot.setYRange(bottom * 1.1, top * 1.1)
        self.plot.setXRange(0.4, max(len(steps), 1) + 0.6, padding=0)

    def export(self, path: str | Path, title: Sequence[str] = ()) -> PlotFile:
        """PNG or SVG under `title`; returns where the data landed in the file."""
        return export_plot(self, path, title)
