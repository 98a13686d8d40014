"""Steering the Auto-tune tab through the real window, as a user does: Tune and watch every trial
arrive (table and plot), lock a knob and narrow a range, cancel mid-run and keep the best so far,
Apply the best with its diff, Ctrl+Z and Ctrl+Shift+Z."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.evaluation.tune import best_of
from memsense_gui.state.trial_feed import SPLIT_RUN
from memsense_gui.views.dock import DockId
from tests.gui.fixtures import panel_shows

CLICK = Qt.MouseButton.LeftButton


def _tab(evaluation_window, trials: int):
    window, view = evaluation_window("per_user")
    window.raise_dock(DockId.EVALUATION)
    view.tabs.setCurrentWidget(view.autotune)
    panel = view.autotune
    panel.folds_spin.setValue(1)  # the ticked train / held-out split
    panel.trials_spin.setValue(trials)
    return window, panel


def _tune(qtbot, panel, timeout=120_000):
    with qtbot.waitSignal(panel.tuning_finished, timeout=timeout) as blocker:
        qtbot.mouseClick(panel.run_button, CLICK)
    return blocker.args[0]


def test_every_trial_shows_in_the_table_and_plot_and_apply_is_one_undoable_step(qtbot, evaluation_window):
    window, panel = _tab(evaluation_window, trials=12)
    etas, reports = [], []
    rate_text, observe = panel.rate.text, panel.rate.observe

    def shown() -> str:  # what the ETA label is given after each trial report
        etas.append(rate_text())
        return etas[-1]

    def observed(done: int, total: int) -> None:
        reports.append(done)
        observe(done, total)

    panel.rate.text, panel.rate.observe = shown, observed
    result = _tune(qtbot, panel)
    assert [t for _, t in panel.model.rows] == list(result.trials) and len(result.trials) == 12
    (xs, ys), (bx, by) = panel.history_plot.data(SPLIT_RUN)
    assert list(xs) == [t.number for t in result.trials] and list(ys) == [t.train for t in result.trials]
    assert by[-1] == max(t.train for t in result.trials) == result.best.train
    # a rate needs two reports of different trial counts (the runner may coalesce a fast run's reports)
    assert len(set(reports)) < 2 or any("trials/s" in text and "left" in text for text in etas), (reports, etas)
    proxy = panel.table.model()
    panel.table.sortByColumn(panel.model.TRAIN, Qt.SortOrder.DescendingOrder)  # a click on the train header
    assert float(proxy.index(0, panel.model.TRAIN).data()) == round(result.best.train, 3)
    column = 5 + [h for h in panel.model.HEADERS[5:]].index("mmr_lambda")
    panel.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
    lambdas = [float(proxy.index(r, column).data()) for r in range(proxy.rowCount())]
    assert lambdas == sorted(lambdas)

    current = window.ctx.current
    before = current.config
    qtbot.mouseClick(panel.apply_button, CLICK)
    dialog = window.applying.dialog
    assert dialog.isVisible() and current.config == before
    qtbot.mouseClick(dialog.apply_button, CLICK)
    assert current.config == result.best.config and panel_shows(window.tuning, result.best.config)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=2000)
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert current.config == before
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert current.config == result.best.config


def test_a_locked_knob_never_moves_and_a_range_holds(qtbot, evaluation_window):
    window, panel = _tab(evaluation_window, trials=14)
    window.tuning.set_knob("mmr_lambda", 0.55)  # lock holds the value on screen
    window.ctx.current.flush()
    editor = panel.space_editor
    editor.refresh_current()
    editor.lock("mmr_lambda")
    editor.set_range("alpha", 0.1, 0.3)
    result = _tune(qtbot, panel)
    assert {t.config.mmr_lambda for t in result.trials} == {0.55}
    assert all(0.1 <= t.config.alpha <= 0.3 for t in result.trials[1:])
    assert "1 locked" in editor.summary.text()


def test_a_bad_range_is_refused_in_one_line_before_anything_runs(qtbot, evaluation_window):
    _window, panel = _tab(evaluation_window, trials=5)
    panel.space_editor.set_range("mmr_lambda", 0.9, 0.2)
    qtbot.mouseClick(panel.run_button, CLICK)
    assert panel.task is None and "mmr_lambda" in panel.status.text() and "below its max" in panel.status.text()
    assert panel.left_tabs.currentWidget() is panel.space_editor


def test_cancel_mid_run_keeps_the_best_so_far_and_says_how_many_trials(qtbot, evaluation_window):
    window, panel = _tab(evaluation_window, trials=5000)
    qtbot.mouseClick(panel.run_button, CLICK)
    qtbot.waitUntil(lambda: panel.model.rowCount() >= 4, timeout=120_000)
    with qtbot.waitSignal(panel.tuning_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(panel.cancel_button, CLICK)
    result = blocker.args[0]
    assert result.cancelled and len(result.trials) < 5000
    shown = [t for _, t in panel.model.rows]
    assert shown == list(result.trials) and best_of(shown) == result.best
    n = len(result.trials)
    assert f"resting on {n} trials" in panel.status.text() and f"trial {result.best.number}" in panel.status.text()
    assert panel.apply_button.isEnabled()
    qtbot.mouseClick(panel.apply_button, CLICK)
    qtbot.mouseClick(window.applying.dialog.apply_button, CLICK)
    assert window.ctx.current.config == result.best.config
