"""The explain tree: a result record as a tree."""
from __future__ import annotations


from PySide6.QtCore import QModelIndex

from memsense_gui.models.explain_tree import DictTreeModel
from memsense_gui.models.table import RAW_ROLE


def test_dict_tree_model_holds_the_explain_record(qtmodeltester, ranking):
    model = DictTreeModel()
    record = ranking.results[1]
    model.set_data(record)
    qtmodeltester.check(model)
    index = model.path_index("explain", "mmr", "mmr_score")
    assert index.isValid()
    value = model.index(index.row(), DictTreeModel.VALUE, index.parent())
    assert value.data(RAW_ROLE) == record["explain"]["mmr"]["mmr_score"]
    assert model.rowCount(QModelIndex()) == len(record)
