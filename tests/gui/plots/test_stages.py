"""The stage bars' legend stays inside the plot however narrow its dock."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF

from core.evaluation.diagnose import STAGES, Diagnosis, LostSession
from memsense_gui.plots.stages import BAR_HEIGHT, LEGEND_COLUMNS, StageBars


def _diagnosis(stages: int) -> Diagnosis:
    """Gold sessions lost at the first `stages` stages and returned (LoCoMo dev under Memsense's
    settings: 3 stages), in four question categories."""
    seen = [*STAGES[:stages - 1], "selected"]
    items = tuple(LostSession(f"q{i}", "u", 1 + i % 4, "q?", i, None, seen[i % len(seen)], None, "")
                  for i in range(40 * len(seen)))
    return Diagnosis(k=4, questions=40, items=items)


@pytest.mark.parametrize("width, height, stages", [(420, 320, 6), (560, 320, 6), (1200, 320, 6), (480, 190, 3)])
def test_the_legend_stays_inside_the_plot_and_off_the_bars(qtbot, width, height, stages):
    """Found by a walkthrough at 1280×720 with Cases beside Diagnose: three legend columns ran
    past the plot ("selecte"); in a short dock the legend's rows covered the first bar."""
    bars = StageBars()
    qtbot.addWidget(bars)
    bars.resize(width, height)
    bars.show()
    bars.set_diagnosis(_diagnosis(stages))
    qtbot.wait(50)
    view = bars.getPlotItem().vb.sceneBoundingRect()
    legend = bars.legend.sceneBoundingRect()
    assert legend.right() <= view.right() + 1, (width, legend, view)
    first_bar_top = bars.getPlotItem().vb.mapViewToScene(QPointF(0, -BAR_HEIGHT / 2)).y()
    assert legend.bottom() <= first_bar_top + 1, (height, legend, first_bar_top)
    assert bars.legend.columnCount == LEGEND_COLUMNS or width < 1200  # a wide plot keeps every column
