"""The auto-tuner's trial model under qtmodeltester."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtWidgets import QApplication, QHeaderView, QTableView

from memsense_gui import theme
from memsense_gui.models.table import RAW_ROLE
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


def test_a_new_best_repaints_only_its_row_and_the_old_best(result):
    """A search marks its best after every look: a repaint of the whole table per look grew
    with the trials (82 ms a look at 200 trials against 31); only the two rows change."""
    model = TrialModel()
    model.add([("search", t) for t in result.trials])
    changed: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(lambda a, b, *_: changed.append((a.row(), b.row(), a.column(), b.column())))
    last = len(result.trials) - 1
    model.set_best(("search", result.trials[2].number))
    model.set_best(("search", result.trials[2].number))  # the same best again: nothing to repaint
    model.set_best(("search", result.trials[last].number))
    whole = (0, len(model.HEADERS) - 1)
    assert changed == [(2, 2, *whole), (2, 2, *whole), (last, last, *whole)]
    assert model.index(last, 2).data(Qt.ItemDataRole.BackgroundRole) is not None
    assert model.index(2, 2).data(Qt.ItemDataRole.BackgroundRole) is None


def _calls_into(package: str, work) -> int:
    """How many Python functions of `package` run (called from Qt or not) while `work()` runs."""
    calls = 0

    def count(frame, event, _arg):
        nonlocal calls
        if event == "call" and package in frame.f_code.co_filename:
            calls += 1

    sys.setprofile(count)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls


def test_painting_the_table_runs_no_python(qtbot, result):
    """The table fills while a search runs on another thread: a painted cell must not wait for
    the interpreter that search holds. The whole table painted, sorted by the objective, with its
    best row marked, runs no function of the app's models."""
    model = TrialModel()
    model.add([("search", t) for t in result.trials])
    model.set_best(("search", result.best.number))
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(RAW_ROLE)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(proxy)
    view.setSortingEnabled(True)
    view.sortByColumn(TrialModel.TRAIN, Qt.SortOrder.DescendingOrder)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.resize(900, 400)
    view.show()
    qtbot.waitExposed(view)
    assert _calls_into("memsense_gui", lambda: view.grab()) == 0
    top = proxy.index(0, TrialModel.TRAIN).data(RAW_ROLE)
    assert top == max(t.train for t in result.trials)  # sorted by the number, in Qt
    assert proxy.index(0, TrialModel.TRAIN).data() == f"{top:.3f}"


def test_replacing_every_row_is_one_reset(result):
    model = TrialModel()
    model.add([("search", t) for t in result.trials[:2]])
    seen: list[str] = []
    model.modelReset.connect(lambda: seen.append("reset"))
    model.rowsInserted.connect(lambda *_: seen.append("inserted"))
    model.dataChanged.connect(lambda *_: seen.append("changed"))
    model.set_rows([("fold 1", t) for t in result.trials], ("fold 1", result.trials[3].number))
    assert seen == ["reset"]
    assert model.rowCount() == len(result.trials) and model.rows[3] == ("fold 1", result.trials[3])
    assert model.index(3, TrialModel.RUN).data() == "fold 1"
    assert model.index(3, 0).data(Qt.ItemDataRole.BackgroundRole) is not None
    assert model.index(3, 0).data(Qt.ItemDataRole.ToolTipRole) == "the best trial"


@pytest.mark.parametrize("applied_before", [True, False])
def test_the_best_row_takes_the_new_theme_colour(result, monkeypatch, applied_before):
    """Whether or not an appearance was applied before the table was made (the app builds its
    views first, then applies the saved appearance)."""
    app = QApplication.instance()
    if applied_before:
        theme.apply(app, False)
    else:
        monkeypatch.setattr(theme, "notifier", None)
    model = TrialModel()
    model.set_trials(result.trials, result.trials[1].number)
    try:
        theme.apply(app, True)
        assert model.index(1, 0).data(Qt.ItemDataRole.BackgroundRole) == theme.DARK.qcolor("gold")
        assert model.index(0, 0).data(Qt.ItemDataRole.BackgroundRole) is None
    finally:
        theme.apply(app, False)
    assert model.index(1, 0).data(Qt.ItemDataRole.BackgroundRole) == theme.LIGHT.qcolor("gold")
