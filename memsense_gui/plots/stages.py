"""Where gold sessions are lost: one horizontal stacked bar per row ("all", then each question
category), one segment per stage (SPEC §13), as a share of the row's gold sessions. Clicking a
segment emits `segment_clicked(category or None for "all", stage)`. The colours are the HTML
report's (`core.evaluation.report.STAGE_COLOURS`), so the app and the report read alike.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QSizeF, Qt, Signal

from core.evaluation.diagnose import STAGE_MEANING, STAGES, Diagnosis
from core.evaluation.evaluate import category_name
from core.evaluation.report import STAGE_COLOURS
from memsense_gui import theme
from memsense_gui.plots.style import theme_plot

Row = tuple[int | None, str, Mapping[str, int]]
"""(category, None for every question; its label; stage -> gold sessions)."""
BAR_HEIGHT = 0.7
LEGEND_COLUMNS = 3
"""The most legend columns (fewer when the bars are narrow: `StageBars._fit_legend`)."""
LEGEND_ROWS_ROOM = 0.45
"""Room above the first bar per legend row, in rows of bars, while the plot's height is unknown."""
LEGEND_MARGIN_PIXELS = 8
"""Pixels between the legend and the first bar (and the legend's offset from the top)."""


def stage_rows(diagnosis: Diagnosis) -> list[Row]:
    """"all" first, then each category, with each one's stage totals."""
    rows: list[Row] = [(None, f"all ({len(diagnosis.items)})", diagnosis.stages)]
    for cat, counts in diagnosis.per_category.items():
        rows.append((cat, f"{cat} {category_name(cat)} ({sum(counts.values())})", counts))
    return rows


def segment_at(rows: Sequence[Row], x: float, y: float) -> tuple[int | None, str] | None:
    """The (category, stage) of the segment at view point (x, y), or None (a gap, or off the bars).
    Row i is drawn centred on y = i; x is the share of that row's gold sessions."""
    i = round(y)
    if not 0 <= i < len(rows) or abs(y - i) > BAR_HEIGHT / 2:
        return None
    cat, _label, counts = rows[i]
    total = sum(counts.values())
    left = 0.0
    for stage in STAGES:
        share = counts.get(stage, 0) / total if total else 0.0
        if share and left <= x < left + share:
            return cat, stage
        left += share
    return None


class StageBars(pg.PlotWidget):
    """Stacked stage shares per row; a click on a segment names its category and stage."""

    segment_clicked = Signal(object, str)  # category (None: all questions), stage

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.showGrid(x=True, y=False, alpha=0.25)
        self.rows: list[Row] = []
        self.legend = self.addLegend(offset=(4, 2), labelTextSize="8pt", colCount=LEGEND_COLUMNS)
        self.bars: dict[str, pg.BarGraphItem] = {}
        for stage in STAGES:
            bar = pg.BarGraphItem(x0=[], y=[], width=[], height=BAR_HEIGHT, brush=STAGE_COLOURS[stage],
                                  pen=pg.mkPen(None))
            bar.setToolTip(f"{stage}: {STAGE_MEANING[stage]}")
            self.addItem(bar)
            self.bars[stage] = bar
        self.getPlotItem().invertY(True)  # "all" on top
        self.setLabel("bottom", "share of the row's gold sessions")
        self.scene().sigMouseClicked.connect(self._clicked)
        self.getPlotItem().vb.sigResized.connect(lambda _vb: self._fit_legend())  # the axis widens it too
        self.setMinimumHeight(220)
        self.apply_theme()

    def apply_theme(self, _theme: theme.Theme | None = None) -> None:
        theme_plot(self, self.getPlotItem(), self.legend)

    def set_diagnosis(self, diagnosis: Diagnosis | None) -> None:
        self.rows = stage_rows(diagnosis) if diagnosis is not None else []
        self.legend.clear()
        overall = self.rows[0][2] if self.rows else {}
        for stage in STAGES:
            x0, widths, ys = [], [], []
            for i, (_cat, _label, counts) in enumerate(self.rows):
                total = sum(counts.values())
                left = sum(counts.get(s, 0) for s in STAGES[:STAGES.index(stage)]) / total if total else 0.0
                x0.append(left)
                widths.append(counts.get(stage, 0) / total if total else 0.0)
                ys.append(i)
            self.bars[stage].setOpts(x0=x0, y=ys, width=widths, height=BAR_HEIGHT)
            if overall.get(stage):
                self.legend.addItem(self.bars[stage], f"{stage} ({overall[stage]})")
        self.getAxis("left").setTicks([[(i, label) for i, (_c, label, _n) in enumerate(self.rows)]])
        self.setXRange(0, 1.0, padding=0.01)
        self._fit_legend()
        self.apply_theme()

    def _fit_legend(self) -> None:
        """As many legend columns (up to `LEGEND_COLUMNS`) as the bars' width holds whole, and room
        above the bars for its rows: in a narrow dock three columns ran past the plot ("selecte")."""
        legend = self.__dict__.get("legend")  # None while the plot widget is still being built
        item = self.getPlotItem()
        if legend is None or item is None:
            return
        bars = max(len(self.rows), 1)
        if not legend.items:  # no diagnosis: the empty row, as before there was a legend to fit
            self.setYRange(-0.5, bars - 0.5, padding=0.02)
            return
        width = item.vb.width()
        columns = min(LEGEND_COLUMNS, len(legend.items))
        legend.setColumnCount(columns)
        while columns > 1 and _legend_size(legend).width() > width:
            columns -= 1
            legend.setColumnCount(columns)
        height = item.vb.height()
        above = _legend_size(legend).height() + LEGEND_MARGIN_PIXELS
        if height > 1.5 * above:  # the legend's room above the bars, in data units: `above` pixels at this height
            headroom = above * bars / (height - above)
        else:  # not laid out yet, or too short to keep the legend off the bars
            headroom = -(-len(legend.items) // columns) * LEGEND_ROWS_ROOM
        self.setYRange(-0.5 - headroom, bars - 0.5, padding=0)

    def point_of(self, category: int | None, stage: str) -> QPointF:
        """The scene point at the middle of a segment (what a click there hits)."""
        i = next(n for n, (cat, _l, _c) in enumerate(self.rows) if cat == category)
        counts = self.rows[i][2]
        total = sum(counts.values())
        left = sum(counts.get(s, 0) for s in STAGES[:STAGES.index(stage)]) / total
        middle = left + counts.get(stage, 0) / total / 2
        return self.getPlotItem().vb.mapViewToScene(QPointF(middle, i))

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        vb = self.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        point = vb.mapSceneToView(event.scenePos())
        hit = segment_at(self.rows, point.x(), point.y())
        if hit is not None:
            self.segment_clicked.emit(*hit)


def _legend_size(legend: pg.LegendItem) -> QSizeF:
    """The size the legend's layout asks for at its column count now (its own rectangle follows
    only when next laid out)."""
    legend.layout.invalidate()
    return legend.layout.effectiveSizeHint(Qt.SizeHint.PreferredSize)
