"""Contribution bars: stacks add up to final scores, hover text, in-place updates."""
from __future__ import annotations

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
