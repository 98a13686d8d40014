"""Contribution bars: stacks add up to final scores, hover text, in-place updates."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.config import Config
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from core.records import ROUTES
from memsense_gui.plots.contributions import SEGMENTS, ContributionPlot, stacks


@pytest.fixture(scope="module")
def ranking():
    return rerank(synthetic_pool(n_sessions=12, turns_per_session=6, seed=8), Config(top_k=8))


def test_stacks_sum_to_final_score(ranking):
    st = stacks(ranking)
    assert st.widths.shape == (len(ranking.selection.order), len(SEGMENTS))
    assert np.allclose(st.widths.sum(axis=1), [r.final_score for r in ranking.selected_rows], atol=2e-6)
    for k, row in enumerate(ranking.selected_rows):
        assert st.widths[k, len(ROUTES) + 1] == row.turn_support


def test_bars_are_created_once_and_updated_in_place(qtbot, ranking):
    plot = ContributionPlot()
    qtbot.addWidget(plot)
    bars = list(plot.bars)
    plot.set_ranking(ranking)
    plot.set_ranking(rerank(ranking.pool, Config(top_k=3)))
    assert plot.bars == bars and len(plot.plot.items) >= len(SEGMENTS)
    assert len(plot.bars[0].opts["y"]) == 3


def test_each_bar_ends_in_its_final_score_as_the_rankings_change(qtbot, ranking):
    plot = ContributionPlot()
    qtbot.addWidget(plot)
    other = rerank(ranking.pool, Config(top_k=3, mmr_lambda=0.3, alpha=0.3))
    for shown in (ranking, other, ranking, rerank(ranking.pool, Config(top_k=8, alpha=0.3)), None, ranking):
        plot.set_ranking(shown)
        rows = shown.selected_rows if shown is not None else ()
        visible = [label for label in plot.labels if label.isVisible()]
        assert [label.toPlainText() for label in visible] == [f"{r.final_score:.4f}" for r in rows]
        ends = plot.data.widths.sum(axis=1)
        assert [label.pos().y() for label in visible] == list(range(len(rows)))
        assert [label.pos().x() for label in visible] == pytest.approx(ends.tolist())


def test_hover_text_lists_the_numbers(qtbot, ranking):
    plot = ContributionPlot()
    qtbot.addWidget(plot)
    plot.set_ranking(ranking)
    st = plot.data
    text = plot.text_at(0.0001, 0)
    assert f"final {ranking.selected_rows[0].final_score:.6f}" in text
    assert f"turn support: {st.widths[0, len(ROUTES) + 1]:.4f}" in text
    assert "▶" in text
    assert plot.text_at(0.0, 0.5) is None  # between bars
    assert plot.text_at(0.0, 99) is None


def _lab(color) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of a QColor."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = linear(color.redF()), linear(color.greenF()), linear(color.blueF())
    x, y, z = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
               (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)

    def f(v: float) -> float:
        return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_every_segment_has_a_colour_of_its_own():
    """Found by a walkthrough: s-dense and turn support were two browns (ΔE 13.6) side by side in
    the bars. Every pair of segment colours differs by ΔE*ab 15 or more."""
    import itertools

    from PySide6.QtGui import QColor

    from memsense_gui.plots.contributions import SEGMENTS, segment_color

    labs = {name: _lab(QColor(segment_color(name))) for name in SEGMENTS}
    closest = min((math.dist(labs[a], labs[b]), a, b) for a, b in itertools.combinations(SEGMENTS, 2))
    assert closest[0] >= 15, closest
