"""The turn-support model: the session's turns and the formula."""
from __future__ import annotations


from memsense_gui.models.table import ID_ROLE, RAW_ROLE
from memsense_gui.models.turn_support import TurnSupportModel
from tests.gui.fixtures import cell


def test_turn_support_model_lists_the_sessions_turns(qtmodeltester, ranking):
    row = next(r for r in ranking.selected_rows if r.supporting_turn_count)
    model = TurnSupportModel()
    model.set_row(ranking, row)
    qtmodeltester.check(model)
    assert model.rowCount() == row.supporting_turn_count
    best = [r for r in range(model.rowCount()) if cell(model, r, TurnSupportModel.BEST, RAW_ROLE)]
    assert [cell(model, r, 0, ID_ROLE) for r in best] == [ranking.pool.chunks[row.best_turn].memory_id]
    assert f"{row.turn_support:.4f}" in model.summary()
