"""Contribution bars: one stacked bar per result, each route's RRF contribution, any scheme
bonus, turn support and alpha · memory score; hovering shows the numbers, clicking selects."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Signal
from PySide6.QtGui import QCursor, QFont
from PySide6.QtWidgets import QToolTip

from core.rank.ranking import Ranking
from core.rank.score import clamp01
from core.records import ROUTES
from memsense_gui import theme
from memsense_gui.models.format import ROUTE_SHORT, is_gold, short_id
from memsense_gui.plots.export import PlotFile, export_plot
from memsense_gui.plots.style import theme_plot

SEGMENTS: tuple[str, ...] = ROUTES + ("scheme bonus", "turn support", "alpha · memory")


BAR_HEIGHT = 0.62
BAR_PIXELS = 18
"""The least height of one bar with its label, in pixels: below it, labels would overlap, so
the plot keeps this height per bar and its pane scrolls instead."""
AXIS_PIXELS = 70
"""The plot's height apart from the bars and the legend: the axis with its title, margins."""
LEGEND_ROW_PIXELS = 22
LEGEND_ENTRY_PIXELS = 140
"""Width of one legend entry (swatch and label): the legend takes as many columns as fit."""
MIN_WIDTH = 300


def segment_color(name: str) -> str:
    return {"scheme bonus": theme.OTHER_COLOR, "turn support": theme.TURN_SUPPORT_COLOR,
            "alpha · memory": theme.MEMORY_COLOR}.get(name) or theme.ROUTE_COLORS[name]


@dataclass(frozen=True)
class Stacks:
    """Segment widths (n_results, n_segments) and labels for the contribution bars."""

    widths: np.ndarray
    labels: tuple[str, ...]
    finals: np.ndarray
    ranks: np.ndarray  # (n_results, 8) route ranks, 0 = absent


def stacks(ranking: Ranking, gold: frozenset[str] = frozenset()) -> Stacks:
    """Split each result's final score into its parts (they sum to final_score, up to rounding)."""
    rows = ranking.selected_rows
    in_pool = set(int(i) for i in ranking.candidates)
    widths = np.zeros((len(rows), len(SEGMENTS)))
    labels = []
    for k, row in enumerate(rows):
        chunk = ranking.pool.chunks[row.index]
        own = ranking.contributions[row.index] if row.index in in_pool else np.zeros(len(ROUTES))
        widths[k, : len(ROUTES)] = own
        own_score = row.rrf_score - row.turn_support
        widths[k, len(ROUTES)] = max(0.0, own_score - float(own.sum()))
        widths[k, len(ROUTES) + 1] = row.turn_support
        widths[k, len(ROUTES) + 2] = ranking.config.alpha * clamp01(chunk.memory_score)
        star = "★ " if is_gold(chunk, gold) else ""
        labels.append(f"{star}#{k + 1} {short_id(chunk.memory_id, chunk.user_id)}")
    finals = np.array([r.final_score for r in rows])
    ranks = ranking.pool.ranks[[r.index for r in rows]] if rows else np.zeros((0, len(ROUTES)), dtype=int)
    return Stacks(widths, tuple(labels), finals, ranks)


def nice_ceiling(value: float) -> float:
    """The next of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^n at or above `value`: a steady
    axis while sliders move, without much empty room."""
    if value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for m in (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if m * 10 ** exp >= value - 1e-12:
            return m * 10 ** exp
    return 10.0 ** (exp + 1)


def legend_columns(width: int) -> int:
    """Legend columns that fit `width` pixels (2 to 6)."""
    return max(2, min(6, width // LEGEND_ENTRY_PIXELS))


def minimum_height(n_bars: int, width: int) -> int:
    """Pixels the plot needs at `width` so that `n_bars` bars, their labels and the legend
    never overlap."""
    legend_rows = math.ceil(len(SEGMENTS) / legend_columns(width))
    return AXIS_PIXELS + legend_rows * LEGEND_ROW_PIXELS + max(n_bars, 1) * BAR_PIXELS


class ContributionPlot(pg.GraphicsLayoutWidget):
    """Stacked horizontal bars, one per result, rank 1 on top."""

    result_clicked = Signal(int)  # 0-based result position

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.invertY(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setLabel("bottom", "score contribution (stacks to final_score)")
        self.bars: list[pg.BarGraphItem] = []
        self.legend = pg.LegendItem(colCount=6, labelTextSize="9pt")
        self.addItem(self.legend, row=1, col=0)
        for name in SEGMENTS:
            bar = pg.BarGraphItem(x0=[], y=[], height=BAR_HEIGHT, width=[], brush=segment_color(name),
                                  pen=pg.mkPen(None), name=name)
            self.plot.addItem(bar)
            self.bars.append(bar)
            self.legend.addItem(bar, ROUTE_SHORT.get(name, name))
        self.labels: list[pg.TextItem] = []
        self._shown: list[tuple[str, float] | None] = []  # each label's text and x, None when hidden
        self._ticks: list = []
        self._view: tuple[float, int] = (0.0, 0)
        self.data = Stacks(np.zeros((0, len(SEGMENTS))), (), np.zeros(0), np.zeros((0, len(ROUTES))))
        self.setMinimumWidth(MIN_WIDTH)
        self.scene().sigMouseMoved.connect(self._hover)
        self.scene().sigMouseClicked.connect(self._clicked)
        self.apply_theme()

    def apply_theme(self) -> None:
        t = theme.current()
        theme_plot(self, self.plot, self.legend)
        for label in self.labels:
            label.setColor(t.text)

    def set_ranking(self, ranking: Ranking | None, gold: frozenset[str] = frozenset()) -> None:
        self.data = stacks(ranking, gold) if ranking is not None else Stacks(
            np.zeros((0, len(SEGMENTS))), (), np.zeros(0), np.zeros((0, len(ROUTES))))
        n = len(self.data.labels)
        self.setMinimumHeight(minimum_height(n, self.width()))
        y = np.arange(n, dtype=float)
        left = np.zeros(n)
        for j, bar in enumerate(self.bars):
            w = self.data.widths[:, j]
            bar.setOpts(x0=left.copy(), y=y, width=w, height=BAR_HEIGHT)
            left += w
        self._update_labels(left)
        ticks = [list(zip(y.tolist(), self.data.labels)), []]
        if ticks != self._ticks:  # re-laying out the axis is the slow part of a repaint
            self._ticks = ticks
            self.plot.getAxis("left").setTicks(ticks)
        view = (nice_ceiling(float(left.max()) * 1.15) if n else 1.0, max(n, 1))
        if view != self._view:
            self._view = view
            self.plot.setXRange(0, view[0], padding=0)
            self.plot.setYRange(-0.6, view[1] - 0.4, padding=0)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        """A narrow plot wraps its legend onto more rows rather than cutting it off."""
        super().resizeEvent(event)
        if not hasattr(self, "data"):  # pyqtgraph resizes the widget before __init__ is done
            return
        cols = legend_columns(self.width())
        if cols != self.legend.columnCount:
            self.legend.setColumnCount(cols)
        self.setMinimumHeight(minimum_height(len(self.data.labels), self.width()))

    def _update_labels(self, totals: np.ndarray) -> None:
        t = theme.current()
        while len(self.labels) < len(totals):
            label = pg.TextItem(color=t.text, anchor=(0, 0.5))
            font = QFont()
            font.setPointSize(8)
            label.setFont(font)
            self.plot.addItem(label)
            self.labels.append(label)
            self._shown.append(None)
        shown = [(f"{final:.4f}", x) for final, x in zip(self.data.finals.tolist(), totals.tolist())]
        for k, label in enumerate(self.labels):  # only what changed: a label's text is laid out again on each set
            now, was = (shown[k] if k < len(shown) else None), self._shown[k]
            if now == was:
                continue
            if now is None:
                label.setVisible(False)
            else:
                if was is None or now[0] != was[0]:
                    label.setText(now[0])
                label.setPos(now[1], float(k))
                label.setVisible(True)
            self._shown[k] = now

    def text_at(self, x: float, y: float) -> str | None:
        """What hovering at view coordinates (x, y) shows: the bar's numbers, segment marked."""
        k = int(round(y))
        if not (0 <= k < len(self.data.labels)) or abs(y - k) > BAR_HEIGHT / 2:
            return None
        w = self.data.widths[k]
        edges = np.cumsum(w)
        hit = int(np.searchsorted(edges, x, side="right")) if 0 <= x < edges[-1] else None
        lines = [f"<b>{self.data.labels[k]}</b> · final {self.data.finals[k]:.6f}"]
        for j, name in enumerate(SEGMENTS):
            if w[j] <= 0:
                continue
            rank = f" (rank {int(self.data.ranks[k, j])})" if j < len(ROUTES) else ""
            line = f"{name}: {w[j]:.4f}{rank}"
            lines.append(f"<b>▶ {line}</b>" if hit == j else line)
        return "<br>".join(lines)

    def _view_pos(self, scene_pos: QPointF) -> QPointF | None:
        if not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        return self.plot.vb.mapSceneToView(scene_pos)

    def _hover(self, scene_pos: QPointF) -> None:
        p = self._view_pos(scene_pos)
        text = self.text_at(p.x(), p.y()) if p is not None else None
        if text:
            QToolTip.showText(QCursor.pos(), text, self)
        else:
            QToolTip.hideText()

    def _clicked(self, event) -> None:
        p = self._view_pos(event.scenePos())
        if p is not None and self.text_at(p.x(), p.y()):
            self.result_clicked.emit(int(round(p.y())))

    def export(self, path: str | Path, title: Sequence[str] = ()) -> PlotFile:
        """PNG or SVG under `title`; returns where the data landed in the file."""
        return export_plot(self, path, title)
