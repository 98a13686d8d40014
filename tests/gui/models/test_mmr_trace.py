"""The MMR trace model: every pick, each duplicate once."""
from __future__ import annotations


from core.config import Config
from core.rank.rerank import rerank
from memsense_gui.models.mmr_trace import MMRTraceModel
from memsense_gui.models.table import ID_ROLE
from tests.gui.fixtures import cell


def test_mmr_trace_lists_every_pick_and_each_duplicate_once(qtmodeltester, pool):
    ranking = rerank(pool, Config(top_k=8, duplicate_threshold=0.5))
    model = MMRTraceModel()
    model.set_ranking(ranking)
    qtmodeltester.check(model)
    events = [(cell(model, r, MMRTraceModel.EVENT), cell(model, r, MMRTraceModel.CHUNK, ID_ROLE))
              for r in range(model.rowCount())]
    picks = [mid for e, mid in events if e == "pick"]
    assert picks == ranking.result_ids
    skips = [mid for e, mid in events if e == "skip"]
    assert len(skips) == len(set(skips))
    all_skipped = {ranking.pool.chunks[ranking.rows[r].index].memory_id
                   for s in ranking.selection.steps for r, _, _ in s.skipped}
    assert set(skips) == all_skipped
