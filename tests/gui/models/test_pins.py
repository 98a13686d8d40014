"""Pinned chunks follow the ranking."""
from __future__ import annotations


from memsense_gui.models.pins import PinsModel
from memsense_gui.models.table import RAW_ROLE
from tests.gui.fixtures import cell


def test_pins_model_follows_the_ranking(qtmodeltester, ranking, pool):
    pins = (ranking.result_ids[0], pool.chunks[-1].memory_id)
    model = PinsModel()
    model.set_pins(pins, ranking)
    qtmodeltester.check(model)
    assert cell(model, 0, PinsModel.STATUS, RAW_ROLE) == "selected"
    assert cell(model, 0, PinsModel.RANK, RAW_ROLE) == 1
    assert cell(model, 1, PinsModel.REASON) == ranking.fate(pins[1]).reason
