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


def test_a_field_that_does_not_apply_shows_a_dash_not_null():
    """A null of the record reads as "—" on screen (as in the other tables); its value stays None
    and its tooltip says what it is."""
    from PySide6.QtCore import Qt

    model = DictTreeModel()
    model.set_data({"duplicate_of": None, "turn_support": 0.25})
    none = model.index(0, DictTreeModel.VALUE, QModelIndex())
    assert none.data() == "—" and none.data(RAW_ROLE) is None
    assert none.data(Qt.ItemDataRole.ToolTipRole) == "null: does not apply here"
    assert model.index(1, DictTreeModel.VALUE, QModelIndex()).data() == "0.25"


def test_formula_tree_model_nests_as_the_formula(qtmodeltester, ranking):
    from core.rank.formula import formula_tree
    from memsense_gui.models.formula_tree import ADDS_ROLE, KEY_ROLE, FormulaTreeModel

    model = FormulaTreeModel()
    record = ranking.record(ranking.result_ids[1])
    model.set_tree(formula_tree(record, ranking.config, ranking.session_first))
    qtmodeltester.check(model)
    root = model.index(0, FormulaTreeModel.TERM)
    assert root.data(KEY_ROLE) == "mmr_score" and root.data(ADDS_ROLE) is True
    assert model.index(0, FormulaTreeModel.VALUE).data(RAW_ROLE) == record.mmr_score
    assert model.rowCount(root) == 2  # λ · Final, − (1 − λ) · Max redund.
    model.set_tree(None)
    assert model.rowCount() == 0
