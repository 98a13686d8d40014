"""Task layouts (issue 36): five dock layouts switched from a toolbar and Ctrl+1…5, each kept as the
user leaves it, reset from the View menu; a view opened from a menu brings up its layout; one
view maximised and brought back."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar

from memsense_gui.state import paths
from memsense_gui.views.dock import DockId
from memsense_gui.window.evaluation import install_evaluation
from memsense_gui.window.failures_actions import install_failures
from memsense_gui.window.layouts import HOME, PLANS, Layout
from memsense_gui.window.main_window import MainWindow
from memsense_gui.window.run_actions import install_runs
from tests.gui.fixtures import FakeEngine

SIZE = (1280, 720)


def _full(w) -> None:
    """Every view the app adds, as the app adds them (app.create_window)."""
    install_runs(w, install_evaluation(w))
    install_failures(w)


def _shown(w) -> set[DockId]:
    return {i for i, d in w.docks.items() if w.showing(i)}


def _at_1280(qtbot, w) -> None:
    w.resize(*SIZE)
    w.show()
    w.activateWindow()  # the layouts' shortcuts are the window's
    qtbot.waitActive(w)
    qtbot.waitUntil(lambda: (w.width(), w.height()) == SIZE, timeout=5_000)
    w.default_layout()
    qtbot.wait(50)


def test_each_layout_shows_its_docks_and_its_main_view_large(qtbot, make_window):
    w = make_window(open_store=False)
    _full(w)
    _at_1280(qtbot, w)
    for n, layout in enumerate(Layout, start=1):
        if layout is Layout.PRODUCTION:
            continue  # its dock is added when a Memsense is connected (test below)
        qtbot.keyClick(w, Qt.Key(Qt.Key.Key_0 + n), Qt.KeyboardModifier.ControlModifier)
        qtbot.wait(50)
        plan = PLANS[layout]
        assert w.layouts.current is layout and w.layouts.actions[layout].isChecked()
        assert w.results.isVisible() == plan.results
        shown = _shown(w)
        assert shown <= set(plan.docks), (layout, shown)
        for area in (plan.left, plan.right, plan.bottom):  # the first of each area is raised
            if area:
                assert area[0] in shown, (layout, area[0])
        if not plan.results:  # the main view (first on the right) takes most of the width
            main = w.docks[plan.right[0]]
            assert main.width() >= 0.5 * w.width(), (layout, main.width())


def test_a_layout_is_kept_as_the_user_left_it_and_reset_restores_its_plan(qtbot, app_home):
    w = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: FakeEngine(loc))
    qtbot.addWidget(w)
    _full(w)
    w.restore_layout()
    _at_1280(qtbot, w)
    assert w.layouts.current is Layout.INSPECT  # a first start
    w.docks[DockId.ROUTE_RANKS].close()
    w.layouts.switch(Layout.EVALUATE)
    assert w.showing(DockId.EVALUATION) and not w.results.isVisible()
    w.layouts.switch(Layout.INSPECT)
    assert w.results.isVisible() and not w.docks[DockId.ROUTE_RANKS].isVisible()  # kept closed in Inspect
    w.layouts.switch(Layout.DIAGNOSE)
    w.close()

    again = MainWindow(app_home, paths.settings(app_home), engine_factory=lambda loc: FakeEngine(loc))
    qtbot.addWidget(again)
    _full(again)
    again.restore_layout()
    again.show()
    assert again.layouts.current is Layout.DIAGNOSE and again.showing(DockId.DIAGNOSE)
    again.layouts.switch(Layout.INSPECT)
    assert not again.docks[DockId.ROUTE_RANKS].isVisible()
    reset = next(a for a in again.findChildren(QAction) if a.objectName() == "action-reset-layout")
    reset.trigger()
    assert again.showing(DockId.ROUTE_RANKS) and again.results.isVisible()


def test_a_view_opened_from_a_menu_brings_up_the_layout_that_holds_it(qtbot, make_window):
    w = make_window(open_store=False)
    _full(w)
    _at_1280(qtbot, w)
    assert w.layouts.current is Layout.INSPECT
    w.docks[DockId.EVALUATION].toggleViewAction().trigger()  # View → Evaluation
    assert w.layouts.current is HOME[DockId.EVALUATION] is Layout.EVALUATE and w.showing(DockId.EVALUATION)
    w.raise_dock(DockId.WHY_NOT)  # e.g. Query → Why not?
    assert w.layouts.current is Layout.INSPECT and w.showing(DockId.WHY_NOT)
    w.raise_dock(DockId.CASES)  # Inspect holds Cases too: no switch
    assert w.layouts.current is Layout.INSPECT and w.showing(DockId.CASES)


def test_the_layouts_toolbar_switches_with_one_click(qtbot, make_window):
    w = make_window(open_store=False)
    _full(w)
    _at_1280(qtbot, w)
    bar = next(b for b in w.findChildren(QToolBar) if b.objectName() == "toolbar-layouts")
    assert [a.text() for a in bar.actions()] == ["Inspect", "Evaluate", "Tune", "Diagnose", "Production"]
    bar.widgetForAction(w.layouts.actions[Layout.TUNE]).click()
    assert w.layouts.current is Layout.TUNE and w.showing(DockId.FIX) and w.showing(DockId.TUNING)
    assert sum(a.isChecked() for a in bar.actions()) == 1


def test_maximise_shows_the_focused_view_alone_and_brings_the_layout_back(qtbot, make_window):
    w = make_window(open_store=False)
    _full(w)
    _at_1280(qtbot, w)
    before = _shown(w)
    pool = w.docks[DockId.CANDIDATE_POOL]
    w.raise_dock(DockId.CANDIDATE_POOL)
    before = _shown(w)
    w.pool_panel.view.setFocus()
    qtbot.waitUntil(lambda: w.layouts.focused_dock() is pool, timeout=2_000)
    qtbot.keyClick(w, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.wait(50)
    assert _shown(w) == {DockId.CANDIDATE_POOL} and not w.results.isVisible()
    assert pool.width() >= 0.9 * w.width() and pool.height() >= 0.6 * w.height()
    qtbot.keyClick(w, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.wait(50)
    assert _shown(w) == before and w.results.isVisible()
    w.results.view.setFocus()  # Results (the centre) maximised: every dock hidden
    w.layouts.toggle_maximised()
    assert not _shown(w) and w.results.isVisible()
    w.layouts.switch(Layout.EVALUATE)  # a switch brings the layout back first, then leaves it
    w.layouts.switch(Layout.INSPECT)
    assert _shown(w) == before


def test_the_production_view_joins_its_own_layout(qtbot, make_window):
    from PySide6.QtWidgets import QLabel

    w = make_window(open_store=False)
    _full(w)
    _at_1280(qtbot, w)
    w.add_view(DockId.PRODUCTION, QLabel("live"))  # as Connect to Memsense does
    assert not w.showing(DockId.PRODUCTION)  # Inspect does not hold it
    w.raise_dock(DockId.PRODUCTION)
    assert w.layouts.current is Layout.PRODUCTION and w.showing(DockId.PRODUCTION) and w.results.isVisible()


def test_a_view_added_while_its_layout_is_shown_takes_its_place_in_the_plan(qtbot, make_window):
    """Qt's restoreDockWidget answers True for a dock already in the window: the Production view
    joined its layout at the bottom whatever the plan said, and an Evaluation view installed in
    Evaluate went to the bottom, not to the right beside Cases."""
    from PySide6.QtWidgets import QLabel

    w = make_window(open_store=False)
    _at_1280(qtbot, w)
    w.layouts.switch(Layout.EVALUATE)
    install_evaluation(w)
    qtbot.wait(50)
    assert w.dockWidgetArea(w.docks[DockId.EVALUATION]) == Qt.DockWidgetArea.RightDockWidgetArea
    assert w.showing(DockId.EVALUATION)
    w.add_view(DockId.PRODUCTION, QLabel("live"))  # not Evaluate's: put away, hidden
    assert w.docks[DockId.PRODUCTION].isHidden()
    w.layouts.switch(Layout.PRODUCTION)
    assert w.showing(DockId.PRODUCTION) and w.results.isVisible()
    assert w.dockWidgetArea(w.docks[DockId.PRODUCTION]) == Qt.DockWidgetArea.BottomDockWidgetArea
