"""Task layouts, as Qt Creator's modes: Inspect, Evaluate, Tune, Diagnose and Production, each a
dock layout with its main view large, chosen from a toolbar (an exclusive action group) or with
Ctrl+1…5.

Each layout keeps the user's changes under its own settings key (`layout/<name>`, written with
`QMainWindow.saveState`); View → Reset layout puts the current one back to its plan. A view
opened from a menu brings up the layout that holds it (`Layouts.show_dock`), and Ctrl+Shift+M
shows the focused view alone in the window and brings the layout back.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from PySide6.QtCore import QByteArray, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QStyle, QToolBar, QWidget

from memsense_gui.views.dock import DockId, ViewDock

LEFT, RIGHT, BOTTOM = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                       Qt.DockWidgetArea.BottomDockWidgetArea)
VERSION = 1
"""Written with every saved layout; a layout saved by another version is replaced by its plan."""
MAXIMISE_SHORTCUT = "Ctrl+Shift+M"
MIN_LEFT = 320
"""The left area's least width in a plan: the sliders' labels and values whole."""
MOST_SIDE = 0.38
"""The most of the window's width a side area takes to show its views' least width."""


class Layout(StrEnum):
    INSPECT = "inspect"
    EVALUATE = "evaluate"
    TUNE = "tune"
    DIAGNOSE = "diagnose"
    PRODUCTION = "production"

    @property
    def label(self) -> str:
        return self.value.capitalize()

    @property
    def key(self) -> str:
        return f"layout/{self.value}"


@dataclass(frozen=True)
class Plan:
    """A layout's default: whether the Results view (the window's centre) shows, the docks of each
    area (tabbed, the first raised), the main dock and the share of the window's width the left
    area takes and of its height the bottom area takes."""

    purpose: str
    results: bool
    left: tuple[DockId, ...] = ()
    right: tuple[DockId, ...] = ()
    bottom: tuple[DockId, ...] = ()
    left_share: float = 0.25
    right_share: float = 0.3
    bottom_share: float = 0.36

    @property
    def docks(self) -> tuple[DockId, ...]:
        return (*self.left, *self.right, *self.bottom)


PLANS: dict[Layout, Plan] = {
    Layout.INSPECT: Plan(
        "A query's results and why each is there", True, (DockId.TUNING, DockId.CASES),
        (DockId.CHUNK, DockId.EXPLAIN, DockId.TURN_SUPPORT, DockId.WHY_NOT),
        (DockId.ROUTE_RANKS, DockId.CANDIDATE_POOL, DockId.MMR_TRACE, DockId.COMPARE), 0.2, 0.3),
    Layout.EVALUATE: Plan(
        "Question sets: every preset's metrics, A against B, runs kept", False, (DockId.CASES,),
        (DockId.EVALUATION, DockId.IMPACT, DockId.HISTORY), left_share=0.27, right_share=0.73),
    Layout.TUNE: Plan(
        "Settings that fix failing questions, and presets side by side", False, (DockId.TUNING,),
        (DockId.FIX, DockId.COMPARE), left_share=0.25, right_share=0.75),
    Layout.DIAGNOSE: Plan(
        "Where the question set's misses come from", False, (DockId.CASES,), (DockId.DIAGNOSE,),
        left_share=0.3, right_share=0.7),
    Layout.PRODUCTION: Plan(  # the service's answer below the app's, full width: at 1280 px beside Results it
        # took Results' snippet and caption and its own last column (the reproduction's final)
        "A live Memsense service's results beside the app's", True, (DockId.TUNING,), (), (DockId.PRODUCTION,),
        left_share=0.2),
}
HOME: dict[DockId, Layout] = {}
"""The layout a menu brings up for each dock: the first that holds it."""
for _layout, _plan in PLANS.items():
    for _dock in _plan.docks:
        HOME.setdefault(_dock, _layout)


class LayoutWindow(Protocol):
    """What the layouts move: the window's docks, its centre (Results) and its state."""

    docks: dict[DockId, ViewDock]

    def centralWidget(self) -> QWidget | None: ...  # noqa: N802 - Qt's names
    def saveState(self, version: int = ...) -> QByteArray: ...  # noqa: N802
    def restoreState(self, state: QByteArray | bytes, version: int = ...) -> bool: ...  # noqa: N802
    def addDockWidget(self, area: Qt.DockWidgetArea, dock: QDockWidget) -> None: ...  # noqa: N802
    def tabifyDockWidget(self, first: QDockWidget, second: QDockWidget) -> None: ...  # noqa: N802
    def resizeDocks(self, docks: list[QDockWidget], sizes: list[int], o: Qt.Orientation) -> None: ...  # noqa: N802
    def restoreDockWidget(self, dock: QDockWidget) -> bool: ...  # noqa: N802
    def addToolBar(self, area: Qt.ToolBarArea, bar: QToolBar) -> None: ...  # noqa: N802
    def width(self) -> int: ...
    def height(self) -> int: ...
    def window(self) -> QWidget: ...


class Layouts(QObject):
    """The five task layouts of `window`: the toolbar and actions that switch them, each one's
    saved state, Reset and Maximise."""

    switched = Signal(object)  # Layout: shown (at start too), after its saved state was restored

    def __init__(self, window: LayoutWindow, settings: QSettings):
        super().__init__(window.window())
        self.window, self.settings = window, settings
        self.current = Layout.INSPECT
        self._maximised: QByteArray | None = None  # the layout's state while one view fills the window
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        self.actions: dict[Layout, QAction] = {}
        self.toolbar = QToolBar("Layouts")
        self.toolbar.setObjectName("toolbar-layouts")
        self.toolbar.setMovable(False)
        for n, layout in enumerate(Layout, start=1):
            action = QAction(layout.label, window.window())
            action.setObjectName(f"action-layout-{layout.value}")
            action.setCheckable(True)
            action.setShortcut(QKeySequence(f"Ctrl+{n}"))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            action.setToolTip(f"{layout.label} (Ctrl+{n}): {PLANS[layout].purpose}")
            action.triggered.connect(lambda _checked=False, chosen=layout: self.switch(chosen))
            self.group.addAction(action)
            self.toolbar.addAction(action)
            window.window().addAction(action)
            self.actions[layout] = action
        self.actions[self.current].setChecked(True)
        self.maximise_action = QAction("&Maximise the focused view", window.window())
        self.maximise_action.setObjectName("action-maximise-view")
        self.maximise_action.setCheckable(True)
        self.maximise_action.setShortcut(QKeySequence(MAXIMISE_SHORTCUT))
        self.maximise_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.maximise_action.triggered.connect(lambda _checked=False: self.toggle_maximised())
        window.window().addAction(self.maximise_action)

    # ---- switching
    def switch(self, layout: Layout) -> None:
        """Keep the current layout's state, then show `layout`: as the user left it, else its plan."""
        if layout == self.current and self._maximised is None:
            self.actions[layout].setChecked(True)
            return
        self.save()
        self.current = layout
        self.actions[layout].setChecked(True)
        self.settings.setValue("layout/current", layout.value)
        if not self._restore_saved():
            self.reset()
        self.switched.emit(layout)

    def restore(self) -> None:
        """At start: the layout last used (Inspect on a first start), as it was left."""
        name = str(self.settings.value("layout/current", Layout.INSPECT.value))
        self.current = Layout(name) if name in Layout._value2member_map_ else Layout.INSPECT
        self.actions[self.current].setChecked(True)
        if not self._restore_saved():
            QTimer.singleShot(0, self.reset)  # once the window has its size: the plan's shares are of it
        self.switched.emit(self.current)

    def _restore_saved(self) -> bool:
        state = self.settings.value(self.current.key)
        if not (isinstance(state, QByteArray) and self.window.restoreState(state, VERSION)):
            return False
        self._centre().setVisible(PLANS[self.current].results)
        return True

    def save(self) -> None:
        """Write the current layout's state under its key (the layout, not one maximised view)."""
        self._unmaximise()
        self.settings.setValue(self.current.key, self.window.saveState(VERSION))

    def reset(self) -> None:
        """The current layout's plan: its docks in their areas, the others hidden, the main views raised."""
        self._unmaximise()
        w, plan = self.window, PLANS[self.current]
        for dock in w.docks.values():
            if dock.id not in plan.docks:
                dock.hide()
        self._centre().setVisible(plan.results)
        firsts: dict[Qt.DockWidgetArea, ViewDock] = {}
        for area, ids in ((LEFT, plan.left), (RIGHT, plan.right), (BOTTOM, plan.bottom)):
            placed = [w.docks[i] for i in ids if i in w.docks]
            for dock in placed:
                dock.setFloating(False)
                w.addDockWidget(area, dock)
                if area in firsts:
                    w.tabifyDockWidget(firsts[area], dock)
                else:
                    firsts[area] = dock
                dock.show()
            if placed:
                placed[0].raise_()
        self._size(plan, firsts)

    def _size(self, plan: Plan, firsts: dict[Qt.DockWidgetArea, ViewDock]) -> None:
        """The plan's shares of the window; each side is widened (up to `MOST_SIDE` of the width) to
        the widest least width of its views beside a vertical scroll bar, the left one is at least
        `MIN_LEFT` wide (the sliders' room)."""
        w = self.window
        bar = QApplication.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent) + 2

        def least(ids: tuple[DockId, ...]) -> int:
            widest = max((w.docks[i].view.minimumSizeHint().width() for i in ids if i in w.docks), default=0)
            return min(widest + bar, int(w.width() * MOST_SIDE))

        wanted = {LEFT: max(int(w.width() * plan.left_share), MIN_LEFT, least(plan.left)),
                  RIGHT: max(int(w.width() * plan.right_share), least(plan.right))}
        across = [a for a in (LEFT, RIGHT) if a in firsts]
        if across:
            w.resizeDocks([firsts[a] for a in across], [wanted[a] for a in across], Qt.Orientation.Horizontal)
        if BOTTOM in firsts:
            w.resizeDocks([firsts[BOTTOM]], [int(w.height() * plan.bottom_share)], Qt.Orientation.Vertical)

    def _centre(self) -> QWidget:
        centre = self.window.centralWidget()
        assert centre is not None, "the window's centre is the Results view"
        return centre

    # ---- docks
    def holds(self, which: DockId) -> bool:
        """`which` belongs to the current layout (by its plan, or shown there by the user)."""
        dock = self.window.docks.get(which)
        return which in PLANS[self.current].docks or (dock is not None and not dock.isHidden())

    def show_dock(self, which: DockId) -> None:
        """Bring `which` up: in this layout if it holds it, else in the layout that does."""
        if self._maximised is not None and not self.window.docks[which].isVisible():
            self._unmaximise()
        if not self.holds(which) and which in HOME:
            self.switch(HOME[which])
        dock = self.window.docks[which]
        dock.show()
        dock.raise_()

    def added(self, dock: ViewDock, area: Qt.DockWidgetArea = BOTTOM) -> None:
        """Put a dock added after the layout was restored (not yet in the window) where the saved
        layout had it, else where the plan puts it, else in `area`, hidden (it belongs to another
        layout). Qt finds a saved place only for a dock not yet added: for one in the window it
        answers True, and the plan was never used."""
        if self.window.restoreDockWidget(dock):
            return
        plan = PLANS[self.current]
        if dock.id not in plan.docks:
            self.window.addDockWidget(area, dock)
            dock.hide()
            return
        area, ids = next((a, ids) for a, ids in ((LEFT, plan.left), (RIGHT, plan.right), (BOTTOM, plan.bottom))
                         if dock.id in ids)
        self.window.addDockWidget(area, dock)
        mates = [self.window.docks[i] for i in ids if i != dock.id and i in self.window.docks
                 and not self.window.docks[i].isHidden()]
        if mates:
            self.window.tabifyDockWidget(mates[0], dock)
        dock.show()

    # ---- one view alone
    @property
    def maximised(self) -> bool:
        return self._maximised is not None

    def focused_dock(self) -> ViewDock | None:
        """The dock holding the focus; None when it is in the Results view or nowhere."""
        widget = QApplication.focusWidget()
        while widget is not None and not isinstance(widget, ViewDock):
            widget = widget.parentWidget()
        return widget if isinstance(widget, ViewDock) and widget.id in self.window.docks else None

    def toggle_maximised(self, dock: ViewDock | None = None) -> None:
        """The focused view (`dock`, else the dock holding the focus, else Results) alone in the
        window; again: the layout as it was."""
        if self._unmaximise():
            return
        w = self.window
        dock = dock or self.focused_dock()
        if dock is None and not self._centre().isVisible():
            dock = next((d for d in w.docks.values() if d.isVisible() and not d.visibleRegion().isEmpty()), None)
        self._maximised = w.saveState(VERSION)
        for other in w.docks.values():
            if other is not dock:
                other.hide()
        self._centre().setVisible(dock is None)
        if dock is not None:
            dock.show()
            dock.raise_()
        self.maximise_action.setChecked(True)

    def _unmaximise(self) -> bool:
        if self._maximised is None:
            return False
        state, self._maximised = self._maximised, None
        self.window.restoreState(state, VERSION)
        self._centre().setVisible(PLANS[self.current].results)
        self.maximise_action.setChecked(False)
        return True
