"""The auto-tuner's trial model under qtmodeltester."""
from __future__ import annotations


import pytest
from PySide6.QtCore import Qt

from memsense_gui.models.trials import TrialModel
from tests.gui.fixtures import synthetic_tune


@pytest.fixture(scope="module")
def result():
    return synthetic_tune(["synth-a"], ["synth-b"], "recall_all@4", 8, None, None)


def test_trial_model_passes_modeltester(qtmodeltester, result):
    model = TrialModel()
    model.set_trials(result.trials, result.best.number)
    qtmodeltester.check(model)
    assert model.rowCount() == len(result.trials)
    assert model.index(0, 2).data(Qt.ItemDataRole.UserRole + 1) == result.trials[0].train
