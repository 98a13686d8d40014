"""The candidate pool model: the whole pool, each candidate's fate."""
from __future__ import annotations


import pytest

from memsense_gui.models.format import pool_rows
from memsense_gui.models.pool import PoolModel
from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from tests.gui.fixtures import cell


def test_pool_model_lists_the_whole_pool_with_fates(qtmodeltester, ranking):
    model = PoolModel()
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    rows = pool_rows(ranking)
    assert model.rowCount() == len(rows) >= len(ranking.candidates)
    statuses = [cell(model, r, PoolModel.FATE, RAW_ROLE) for r in range(model.rowCount())]
    selected = [cell(model, r, PoolModel.CHUNK, ID_ROLE) for r, s in enumerate(statuses) if s in ("selected", "fallback_fill")]
    assert sorted(selected) == sorted(ranking.result_ids)
    for r in range(model.rowCount()):
        mid = cell(model, r, PoolModel.CHUNK, ID_ROLE)
        assert cell(model, r, PoolModel.REASON) == ranking.fate(mid).reason
        assert cell(model, r, PoolModel.FUSED, RAW_ROLE) == pytest.approx(float(ranking.fused[rows[r]]))
