"""The Pareto plot of fix candidates keeps every point's number inside the plot, at any width."""
from __future__ import annotations

import pytest

from core.config import Config
from core.evaluation.fix import FixCandidate
from memsense_gui.plots.pareto import ParetoPlot


def _candidate(fixed: int, broken: int) -> FixCandidate:
    return FixCandidate(Config(), {}, tuple(f"q{i}" for i in range(fixed)), (), tuple(f"b{i}" for i in range(broken)),
                        0.5, 0.5, 1.0)


@pytest.mark.parametrize("width", [260, 380, 700])
def test_the_right_most_number_is_not_cut_at_the_right_edge(qtbot, width):
    plot = ParetoPlot()
    qtbot.addWidget(plot)
    plot.resize(width, 300)
    plot.show()
    qtbot.waitExposed(plot)
    broken = [43, 62, 97, 36, 42, 63, 64, 12, 9, 10, 120]
    plot.set_candidates([_candidate(1 + n % 4, b) for n, b in enumerate(broken)], 5)
    vb = plot.getPlotItem().vb
    last = plot.labels[broken.index(max(broken))]
    assert last.toPlainText() == "11"

    def text():
        return last.textItem.mapRectToScene(last.textItem.boundingRect())

    def beside() -> bool:  # laid out: the number sits just right of its point (placed at the next paint)
        x = plot.point_of(len(broken) - 1).x()
        return x < text().left() < x + 20

    for w in (width, width + 200):  # as laid out, and after a resize
        plot.resize(w, 300)
        qtbot.waitUntil(lambda w=w: vb.width() > w - 120 and beside(), timeout=5000)
        edge = vb.mapRectToScene(vb.boundingRect()).right()
        assert text().right() <= edge, \
            f"at {w} px the number of the right-most point ends at {text().right():.0f}, the plot at {edge:.0f}"


def test_the_numbers_of_close_points_at_one_height_do_not_run_together(qtbot):
    plot = ParetoPlot()
    qtbot.addWidget(plot)
    plot.resize(380, 300)
    plot.show()
    qtbot.waitExposed(plot)
    points = [(4, 57), (4, 96), (4, 97), (3, 23), (3, 28), (3, 34), (3, 50), (3, 64)]  # LoCoMo dev's, in fix.png
    plot.set_candidates([_candidate(f, b) for f, b in points], 5)

    def rect(n):
        return plot.labels[n].textItem.mapRectToScene(plot.labels[n].textItem.boundingRect())

    qtbot.waitUntil(lambda: all(plot.point_of(n).x() < rect(n).left() for n in range(len(points))), timeout=5000)
    for a, b in ((1, 2), (3, 4), (4, 5)):  # 96 and 97; 23, 28 and 34 broken
        assert not rect(a).intersects(rect(b)), f"the numbers {a + 1} and {b + 1} overlap"
