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


ROLES = (Qt.ItemDataRole.DisplayRole, RAW_ROLE, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
         Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.TextAlignmentRole)


def _cells(model) -> list:
    return [cell(model, r, c, role) for r in range(model.rowCount()) for c in range(model.columnCount()) for role in ROLES]


@pytest.mark.parametrize("knob, value, same", [("mmr_lambda", 0.5, True), ("rrf_k", 5.0, False)])
def test_a_ranking_with_the_same_cells_keeps_the_matrix_and_shows_what_a_fresh_one_shows(ranking, knob, value, same):
    """A knob that moves no route rank (MMR's lambda) keeps the matrix as it is (no reset, no
    repaint) while its tooltips read the new ranking; one that moves the rows (RRF k) resets it.
    Either way every cell, in every role, is what a model given only the new ranking shows."""
    from dataclasses import replace

    from core.rank.rerank import rerank

    model = RouteMatrixModel()
    model.set_ranking(ranking, gold={"s1"})
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    moved = rerank(ranking.pool, replace(ranking.config, **{knob: value}))
    assert pool_rows(moved) != pool_rows(ranking) or same  # the case tests what it names
    model.set_ranking(moved, gold={"s1"})
    fresh = RouteMatrixModel()
    fresh.set_ranking(moved, gold={"s1"})
    assert model.ranking is moved
    assert bool(resets) is not same
    assert _cells(model) == _cells(fresh)
