"""The fix candidates' trade-off: chosen cases won back (y) against other questions broken (x),
one point per candidate (numbered as in the table; a harmful one is a cross in the "down" colour,
its number followed by "harmful"); clicking a point emits `candidate_clicked(row)`.
The figures are the candidates' verified re-rank (`core.evaluation.fix.FixCandidate`)."""
from __future__ import annotations

from typing import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Signal
from PySide6.QtGui import QFontMetrics

from core.evaluation.fix import FixCandidate
from memsense_gui import theme
from memsense_gui.plots.style import theme_plot

POINT_SIZE, SELECTED_SIZE = 12, 18
LABEL_ANCHOR = (-0.4, 1.1)
"""A point's number: its left edge 0.4 of its width right of the point, its bottom just above it."""
TEXT_MARGIN = 4
"""Pixels a text item keeps on each side of its text (Qt's default document margin)."""
X_LEFT = -0.5


def front_line(points: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The staircase through the points no other point beats on both axes (fewer broken, more
    fixed): sorted by broken, each step up where the cases fixed rise."""
    steps: list[tuple[int, int]] = []
    for x, y in sorted(set(points), key=lambda p: (p[0], -p[1])):
        if not steps or y > steps[-1][1]:
            if steps:
                steps.append((x, steps[-1][1]))
            steps.append((x, y))
    return steps


class ParetoPlot(pg.PlotWidget):
    candidate_clicked = Signal(int)  # row of the candidate in the table

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.showGrid(x=True, y=True, alpha=0.25)
        self.legend = self.addLegend(offset=(-4, 4), labelTextSize="8pt")
        self.line = pg.PlotDataItem([], [], pen=pg.mkPen(width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        self.addItem(self.line)
        self.points = pg.ScatterPlotItem(size=POINT_SIZE, hoverable=True, tip=self._tip)
        self.addItem(self.points)
        self.labels: list[pg.TextItem] = []
        self.candidates: tuple[FixCandidate, ...] = ()
        self.selected: int | None = None
        self.points.sigClicked.connect(self._clicked)
        self.setLabel("bottom", "other questions broken")
        self.setLabel("left", "chosen cases fixed")
        self.setMinimumHeight(200)
        self.getPlotItem().vb.sigResized.connect(lambda *_: self._fit_x())
        self.apply_theme()

    def apply_theme(self, _theme: theme.Theme | None = None) -> None:
        theme_plot(self, self.getPlotItem(), self.legend)
        self.line.setPen(pg.mkPen(theme.current().muted, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        self._draw()

    def _tip(self, x: float, y: float, data: int) -> str:
        c = self.candidates[data]
        harm = f"\n{c.harm_text()}" if c.harmful else ""
        return f"candidate {data + 1}: fixes {len(c.cases_fixed)} cases, breaks {len(c.broken)}{harm}"

    def set_candidates(self, candidates: Sequence[FixCandidate], cases: int) -> None:
        self.candidates = tuple(candidates)
        self.selected = None
        self._fit_x()
        self.setYRange(-0.3, max(cases, 1) + 0.5, padding=0)
        self.getAxis("left").setTicks([[(n, str(n)) for n in range(cases + 1)]])
        self._draw()

    def label_room(self) -> float:
        """Pixels right of a point its number takes (`LABEL_ANCHOR`: text margins included)."""
        widest = max((QFontMetrics(self.font()).horizontalAdvance(self.label_text(n)) for n in range(len(self.candidates))),
                     default=QFontMetrics(self.font()).horizontalAdvance("1"))
        return (1 - LABEL_ANCHOR[0]) * (widest + 2 * TEXT_MARGIN) + 2

    def _fit_x(self) -> None:
        """The x range: from just left of 0 to where the right-most point's number ends, in the
        pixels the plot has now (kept on every resize), so no number is cut at the right edge."""
        left, right = X_LEFT, max((len(c.broken) for c in self.candidates), default=0)
        width, room = self.getPlotItem().vb.width(), self.label_room()
        if width > 2 * room:  # the point's pixel room as a share of the range: right = far - room / width * span
            far = (right - left * room / width) / (1 - room / width)
        else:  # not laid out yet: a guess, fitted again on the first resize
            far = right + max(2.0, right * 0.1)
        self.setXRange(left, max(far, right + 1.0), padding=0)
        self._stagger()

    def _stagger(self) -> None:
        """A number that would run into the one of a point just left of it, at the same height, is
        raised a line (every other one of a close run), so "2" and "3" never read as "23"."""
        if len(self.labels) != len(self.candidates):
            return
        vb = self.getPlotItem().vb
        (x0, x1), _ = vb.viewRange()
        per_unit, room = vb.width() / max(x1 - x0, 1e-9), self.label_room()
        before: tuple[int, int] | None = None  # (x, y) of the previous point in the order below
        level = 0
        for n in sorted(range(len(self.candidates)), key=lambda i: self._at(i)[::-1]):
            x, y = self._at(n)
            close = before is not None and before[1] == y and (x - before[0]) * per_unit < room
            level = (level + 1) % 2 if close else 0
            self.labels[n].setAnchor((LABEL_ANCHOR[0], LABEL_ANCHOR[1] + level))
            before = (x, y)

    def _at(self, n: int) -> tuple[int, int]:
        """Candidate `n`'s point: (other questions broken, chosen cases fixed)."""
        c = self.candidates[n]
        return len(c.broken), len(c.cases_fixed)

    def select(self, row: int | None) -> None:
        self.selected = row
        self._draw()

    def _draw(self) -> None:
        t = theme.current()
        for label in self.labels:
            self.removeItem(label)
        self.labels = []
        cs = self.candidates
        spots = [{"pos": (len(c.broken), len(c.cases_fixed)), "data": n,
                  "size": SELECTED_SIZE if n == self.selected else POINT_SIZE,
                  "symbol": "x" if c.harmful else "o",
                  "brush": pg.mkBrush(t.accent if n == self.selected else t.down if c.harmful else t.muted),
                  "pen": pg.mkPen(t.text if n == self.selected else None)} for n, c in enumerate(cs)]
        self.points.setData(spots)
        front = front_line([(len(c.broken), len(c.cases_fixed)) for c in cs])
        self.line.setData([x for x, _ in front], [y for _, y in front])
        for n, c in enumerate(cs):
            label = pg.TextItem(self.label_text(n), color=t.down if c.harmful else t.text, anchor=LABEL_ANCHOR)
            label.setPos(len(c.broken), len(c.cases_fixed))
            self.addItem(label)
            self.labels.append(label)
        self._stagger()

    def label_text(self, n: int) -> str:
        """Candidate `n`'s label: its number as in the table, and 'harmful' when it is."""
        return f"{n + 1} harmful" if self.candidates[n].harmful else str(n + 1)

    def point_of(self, row: int) -> QPointF:
        """The scene point of a candidate's dot (what a click there hits)."""
        c = self.candidates[row]
        return self.getPlotItem().vb.mapViewToScene(QPointF(len(c.broken), len(c.cases_fixed)))

    def _clicked(self, _item, points, *_args) -> None:
        if len(points):
            row = int(points[0].data())
            self.select(row)
            self.candidate_clicked.emit(row)
