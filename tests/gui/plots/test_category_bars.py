"""The per-category bars keep their legend above the tallest bar, whatever the widget's height."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF

from core.config import Config
from core.evaluation.evaluate import PresetEvaluation
from memsense_gui.plots.category_bars import CategoryBars


@pytest.mark.parametrize("height", [260, 400, 700])
def test_the_legend_sits_above_a_full_bar(qtbot, height):
    bars = CategoryBars()
    qtbot.addWidget(bars)
    results = [PresetEvaluation(f"preset {i}", Config(), 4, {"recall_all@4": 1.0}, {1: {"recall_all@4": 1.0}},
                                {1: 3}, ()) for i in range(9)]
    bars.resize(600, height)
    bars.show()
    bars.set_results(results, "recall_all@4")
    qtbot.wait(20)
    assert bars.height() >= bars.minimumHeight()
    vb = bars.getPlotItem().vb
    top_of_bars = vb.mapViewToScene(QPointF(0, 1.0)).y()  # scene y of the value 1 (a full bar)
    legend_bottom = bars.legend.sceneBoundingRect().bottom()
    assert legend_bottom <= top_of_bars, (legend_bottom, top_of_bars)
