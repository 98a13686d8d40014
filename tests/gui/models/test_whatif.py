"""The what-would-it-take model over a real answer on a synthetic pool."""
from __future__ import annotations

from core.config import Config
from core.rank.whatif import what_would_change
from memsense_gui.models.whatif import WhatIfModel


def test_whatif_model_rows_are_the_changes(qtmodeltester, ranking, pool):
    target = next(c.memory_id for c in pool.chunks if c.kind == "session" and c.memory_id not in ranking.result_ids)
    answer = what_would_change(pool, Config(top_k=6), target)
    model = WhatIfModel()
    model.set_answer(answer, pool.user_id)
    qtmodeltester.check(model)
    assert model.rowCount() == len(answer.changes) > 0
    first = answer.changes[0]
    assert model.index(0, model.KNOB).data() == first.knob and model.index(0, model.RANK).data() == str(first.rank)
    assert "from" in model.index(0, 0).data(3)  # tooltip: the change in words
    model.set_answer(None)
    assert model.rowCount() == 0
