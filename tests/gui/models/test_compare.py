"""Two rankings side by side: rank movement between them."""
from __future__ import annotations


from core.config import Config
from core.rank.rerank import rerank
from memsense_gui.models.compare import CompareModel
from memsense_gui.models.table import RAW_ROLE
from tests.gui.fixtures import cell


def test_compare_model_shows_rank_movement(qtmodeltester, pool):
    a = rerank(pool, Config(top_k=5))
    b = rerank(pool, Config(top_k=5, mmr_lambda=1.0))
    model = CompareModel()
    model.set_rankings(a, b)
    qtmodeltester.check(model)
    assert model.rowCount() == 5
    for pos, mid in enumerate(b.result_ids):
        raw = cell(model, pos, CompareModel.B_FROM_A, RAW_ROLE)
        assert raw == (a.result_ids.index(mid) - pos if mid in a.result_ids else None)
    for pos, mid in enumerate(a.result_ids):
        assert cell(model, pos, CompareModel.A_TO_B, RAW_ROLE) == (
            b.result_ids.index(mid) + 1 if mid in b.result_ids else None)
