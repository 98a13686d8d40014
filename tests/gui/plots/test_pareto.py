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
    for w in (width, width + 200):  # as laid out, and after a resize
        plot.resize(w, 300)
        qtbot.wait(100)  # the plot lays out and places its text
        edge = vb.mapRectToScene(vb.boundingRect()).right()
        text = last.textItem.mapRectToScene(last.textItem.boundingRect())
        point = plot.point_of(len(broken) - 1)
        assert point.x() < text.left() < text.right() <= edge, \
            f"at {w} px the number of the right-most point spans {text.left():.0f}-{text.right():.0f}, the plot ends at {edge:.0f}"
