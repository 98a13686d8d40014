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
        rec = ranking.record(mid)
        assert cell(model, r, PoolModel.OWN_RRF, RAW_ROLE) == rec.session_rrf_score  # 0 for a session fetched for its turns
        assert cell(model, r, PoolModel.FINAL, RAW_ROLE) == rec.final_score
        if rec.final_score is not None:  # re-ranked: Final = round(RRF + turn + alpha · Memory, 6) (§3)
            assert rec.final_score == round(rec.rrf_score + ranking.config.alpha * rec.memory_score, 6)
        if rec.turn_support is not None:
            assert rec.rrf_score == pytest.approx(rec.session_rrf_score + rec.turn_support)
