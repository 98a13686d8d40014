"""Plots written as PNG and SVG."""
from __future__ import annotations

import pytest

from core.config import Config
from core.errors import MemsenseError
from core.rank.rerank import rerank
from core.rank.synthetic import synthetic_pool
from memsense_gui.plots.contributions import ContributionPlot
from memsense_gui.plots.mmr import MMRPlot


@pytest.fixture(scope="module")
def ranking():
    return rerank(synthetic_pool(n_sessions=12, turns_per_session=6, seed=8), Config(top_k=8))


def test_export_png_and_svg(qtbot, ranking, tmp_path):
    for cls in (ContributionPlot, MMRPlot):
        plot = cls()
        qtbot.addWidget(plot)
        plot.resize(600, 400)
        plot.show()
        plot.set_ranking(ranking)
        for ext in ("png", "svg"):
            path = tmp_path / f"{cls.__name__}.{ext}"
            plot.export(path)
            assert path.stat().st_size > 500
        assert (tmp_path / f"{cls.__name__}.png").read_bytes()[:4] == b"\x89PNG"
        assert b"<svg" in (tmp_path / f"{cls.__name__}.svg").read_bytes()[:400]
        with pytest.raises(MemsenseError):
            plot.export(tmp_path / "plot.bmp")
