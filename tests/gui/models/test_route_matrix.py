"""The route-rank matrix: ranks, empty when missed, strength falling with rank."""
from __future__ import annotations


import pytest
from PySide6.QtCore import Qt

from core.records import ROUTES
from memsense_gui.models.format import pool_rows
from memsense_gui.models.route_matrix import RouteMatrixModel
from memsense_gui.models.table import RAW_ROLE
from tests.gui.fixtures import cell


def test_route_matrix_shows_ranks_empty_when_missed(qtmodeltester, ranking):
    model = RouteMatrixModel()
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    first = RouteMatrixModel.FIRST_ROUTE
    assert model.columnCount() == first + len(ROUTES)
    rows = pool_rows(ranking)
    for r in range(model.rowCount()):
        for j in range(len(ROUTES)):
            rank = int(ranking.pool.ranks[rows[r], j])
            assert cell(model, r, j + first, RAW_ROLE) == rank
            assert cell(model, r, j + first) == (str(rank) if rank else "")
            background = cell(model, r, j + first, Qt.ItemDataRole.BackgroundRole)
            assert (background is None) == (rank == 0)


def test_route_matrix_strength_falls_with_rank(ranking):
    model = RouteMatrixModel()
    model.set_ranking(ranking)
    strengths = {}
    for r in range(model.rowCount()):
        for c in range(RouteMatrixModel.FIRST_ROUTE, model.columnCount()):
            rank = cell(model, r, c, RAW_ROLE)
            if rank:
                strengths.setdefault(rank, model.strength(r, c))
    ordered = [strengths[k] for k in sorted(strengths)]
    assert ordered == sorted(ordered, reverse=True)
    assert strengths.get(1, 1.0) == pytest.approx(1.0)
