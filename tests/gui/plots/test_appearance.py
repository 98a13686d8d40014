"""Plots read the same in both appearances: axes in the data's own units (0–0.8, never 0–800)
and legend text in the theme's text colour, through dark and back to light."""
from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from core.config import Config
from core.evaluation.evaluate import PresetEvaluation
from memsense_gui import theme
from memsense_gui.plots.category_bars import CategoryBars
from memsense_gui.plots.sensitivity import SensitivityPlot


@pytest.fixture
def light_after(qtbot):
    yield
    theme.apply(QApplication.instance(), False)


def shown_ticks(axis: pg.AxisItem) -> list[tuple[float, str]]:
    """The major tick values and the strings the axis draws for them."""
    lo, hi = sorted(axis.range)
    (spacing, values), *_ = axis.tickValues(lo, hi, 400)
    return list(zip(values, axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing)))


def assert_plain_axis(axis: pg.AxisItem) -> None:
    ticks = shown_ticks(axis)
    assert len(ticks) >= 2
    for value, text in ticks:
        assert float(text) == pytest.approx(value, abs=1e-9), (axis.orientation, text, value)
    assert axis.labelUnitPrefix == ""


def legend_colors(legend: pg.LegendItem) -> set[str]:
    """The colour each legend label is actually drawn in (its first character's format)."""
    colors = set()
    for _sample, label in legend.items:
        cursor = QTextCursor(label.item.document())
        cursor.setPosition(1)
        colors.add(cursor.charFormat().foreground().color().name())
    return colors


def switch(dark: bool, plots) -> None:
    theme.apply(QApplication.instance(), dark)
    for plot in plots:
        plot.apply_theme()


def test_category_bars_and_sensitivity_in_dark_and_back(qtbot, light_after):
    switch(False, ())
    bars = CategoryBars()
    qtbot.addWidget(bars)
    results = [PresetEvaluation(name, Config(), 4, {"recall_all@4": 0.6},
                                {1: {"recall_all@4": 0.8}, 2: {"recall_all@4": 0.3}}, {1: 3, 2: 3}, ())
               for name in ("balanced", "lexical")]
    bars.set_results(results, "recall_all@4")
    sens = SensitivityPlot()
    qtbot.addWidget(sens)
    sens.set_points("mmr_lambda", [(0.3, 0.42, 0.4), (0.5, 0.55, 0.5), (0.8, 0.61, 0.52)], 0.8, "recall_all@4")
    for w in (bars, sens):
        w.resize(700, 400)
        w.show()
    for dark in (True, False, True, False):
        switch(dark, (bars,))  # SensitivityPlot follows the notifier itself
        qtbot.wait(10)
        text = theme.current().text
        for plot in (bars, sens):
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                if axis._tickLevels is None:  # numeric axis (the category axis has fixed ticks)
                    assert_plain_axis(axis)
            assert legend_colors(plot.plotItem.legend) == {text}, dark
        assert max(float(s) for _v, s in shown_ticks(bars.getAxis("left"))) <= 1.18


def test_window_plots_in_dark_and_back(qtbot, ranked_window, light_after):
    window = ranked_window
    plots = (window.results.plot, window.mmr_panel.plot)
    for dark in (True, False):
        window.set_dark(dark)
        qtbot.wait(10)
        text = theme.current().text
        for plot in plots:
            for name in ("left", "bottom"):
                axis = plot.plot.getAxis(name)
                if axis._tickLevels is None:  # numeric axis (the result labels axis has fixed ticks)
                    assert_plain_axis(axis)
            assert legend_colors(plot.legend) == {text}
        bottom = window.results.plot.plot.getAxis("bottom")
        assert max(float(s) for _v, s in shown_ticks(bottom)) <= max(bottom.range) + 1e-9


def test_plots_made_before_the_first_appearance_follow_every_switch(qtbot, light_after, monkeypatch):
    """The app builds its views before it applies the saved appearance: a plot made then must
    still follow the switch (the History and Sensitivity plots once kept a white background in dark)."""
    from memsense_gui.plots.trials import TrialHistoryPlot

    monkeypatch.setattr(theme, "notifier", None)  # nothing applied yet in this process
    plots = (TrialHistoryPlot(), SensitivityPlot())
    for plot in plots:
        qtbot.addWidget(plot)
    for dark in (True, False):
        theme.apply(QApplication.instance(), dark)
        for plot in plots:
            assert plot.backgroundBrush().color().name() == theme.current().base, (type(plot).__name__, dark)
