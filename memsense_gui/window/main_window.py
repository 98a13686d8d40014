"""The main window: pick a user, ask, see why, tune live.

`MainWindow` only lays out the toolbar and docks, builds the menus and wires signals; what
the app does lives in its actions (`stores`, `queries`, `inspector`, `judging`, `exports`,
`comparisons`, each in its own module) and its state in the `AppContext` (`ctx`). Each part
takes the context and the window as the small Protocol of `window.parts` it needs. Docks are
found by `DockId`; another view joins with `add_view(DockId, widget)`; errors anywhere become
a dialog here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtWidgets import (
    QApplication, QComboBox, QLabel, QLineEdit, QMainWindow, QPushButton, QSizePolicy, QToolBar, QWidget,
)

from core.recall.query_text import MAX_QUERY_CHARS
from memsense_gui import app_icons, theme
from memsense_gui.state.context import AppContext, EngineFactory
from memsense_gui.views.baseline import BaselineBar
from memsense_gui.views.cases import CasesPanel
from memsense_gui.views.chunk import ChunkPanel
from memsense_gui.views.compare import ComparePanel
from memsense_gui.views.dialogs import ShortcutsDialog, show_error
from memsense_gui.views.dock import DockId, ViewDock
from memsense_gui.views.tables import keep_columns, save_columns
from memsense_gui.views.explain import ExplainPanel
from memsense_gui.views.mmr import MMRPanel
from memsense_gui.views.pool import PoolPanel
from memsense_gui.views.results import ResultsPanel
from memsense_gui.views.route_matrix import MatrixPanel
from memsense_gui.views.turn_support import TurnSupportPanel
from memsense_gui.views.tuning import TuningPanel
from memsense_gui.views.why_not import WhyNotPanel
from memsense_gui.window.compare_actions import CompareActions
from memsense_gui.window.export_actions import ExportActions
from memsense_gui.window.help_actions import HelpActions
from memsense_gui.window.inspector import Inspector
from memsense_gui.window.judging_actions import JudgingActions
from memsense_gui.window.layouts import HOME, PLANS, Layouts
from memsense_gui.window.memsense_actions import MemsenseActions
from memsense_gui.window.menus import SHORTCUTS, build_menus
from memsense_gui.window.query_actions import QueryActions
from memsense_gui.window.layout_notes import LayoutNotes
from memsense_gui.window.question_picker import QuestionPicker
from memsense_gui.window.cases_actions import CasesActions
from memsense_gui.window.store_actions import StoreActions
from memsense_gui.window.query_history import QueryHistory
from memsense_gui.window.recent_actions import RecentActions
from memsense_gui.window.apply_actions import ApplyActions
from memsense_gui.window.restore_choices import ChoiceMemory
from memsense_gui.window.whatif_actions import WhatIfActions
from memsense_gui.workers import heap

DEFAULT_SIZE = (1500, 940)
"""The first run's window size (width, height), shrunk to fit smaller screens."""

RIGHT_DOCKS = (DockId.CHUNK, DockId.EXPLAIN, DockId.TURN_SUPPORT, DockId.WHY_NOT)
"""Tabbed on the right in the Inspect layout."""
LEFT, RIGHT, BOTTOM = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                       Qt.DockWidgetArea.BottomDockWidgetArea)


class MainWindow(QMainWindow):
    def __init__(self, home: Path, settings: QSettings | None = None, *,
                 engine_factory: EngineFactory | None = None, store_builder: Callable[..., Any] | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.ctx = AppContext(home, settings, engine_factory=engine_factory, store_builder=store_builder, parent=self)
        self.setWindowTitle("memsense")  # then "<store> — memsense": Qt adds no second app name
        self.setWindowIcon(app_icons.icon("memsense"))
        self.setDockNestingEnabled(True)
        self._build_toolbar()
        self._build_docks()
        self.layouts = Layouts(self, self.ctx.settings)
        self.insertToolBar(self.query_bar, self.layouts.toolbar)
        self.layout_notes = LayoutNotes(self, self.layouts, self.ctx.settings)  # a line under the toolbars
        ctx = self.ctx
        self.inspector = Inspector(ctx, self)
        self.stores = StoreActions(ctx, self)
        self.queries = QueryActions(ctx, self)
        self.judging = JudgingActions(ctx, self)
        self.exports = ExportActions(ctx, self)
        self.comparisons = CompareActions(ctx, self)
        self.memsense = MemsenseActions(ctx, self)
        self.whatif = WhatIfActions(ctx, self.whynot_panel, self)
        self.cases = CasesActions(ctx, self)
        self.applying = ApplyActions(ctx, self, self.tuning, self.whynot_panel)
        self.history = QueryHistory(ctx, self.query_edit, self)
        self.help = HelpActions(ctx, self)
        self.picker = QuestionPicker(ctx, self, self)
        self.recent = RecentActions(ctx, self)
        self.query_bar.insertWidget(self.run_action, self.picker.button)
        self.menus = build_menus(self)
        for dock in self.docks.values():
            self._follow_menu(dock)
        self._connect()
        self.exports.restore_config()
        self.choices = ChoiceMemory(ctx, self, self.tuning)
        self.choices.restore()

    # ==== layout ================================================================================
    def _build_toolbar(self) -> None:
        self.user_combo = QComboBox()
        self.user_combo.setObjectName("user-combo")
        self.user_combo.setMinimumContentsLength(10)
        self.user_combo.setToolTip("The user: one conversation, one memory (Ctrl+U)")
        self.query_edit = QLineEdit()
        self.query_edit.setObjectName("query-edit")
        self.query_edit.setPlaceholderText("Ask the memory… (Ctrl+L, Enter to run; Down: the judged questions)")
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.setMaxLength(MAX_QUERY_CHARS)  # Qt's own limit, 32,767, cut a long paste without a word
        self.query_edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.run_button = QPushButton(app_icons.icon("search"), "Search")
        self.run_button.setToolTip("Recall and rank (Enter or Ctrl+Return)")
        bar = QToolBar("Query")
        bar.setObjectName("toolbar-query")
        bar.setMovable(False)
        for widget in (QLabel(" User "), self.user_combo, QLabel("  Query "), self.query_edit):
            bar.addWidget(widget)
        self.run_action = bar.addWidget(self.run_button)
        self.query_bar = bar
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)

    def _build_docks(self) -> None:
        self.results = ResultsPanel()
        self.baseline_bar = BaselineBar(self.ctx)
        self.results.add_to_caption(self.baseline_bar)
        self.setCentralWidget(self.results)
        self.tuning = TuningPanel(self.ctx.presets, self.ctx.current)
        self.tuning.setMinimumWidth(300)
        self.chunk_panel, self.explain_panel, self.turns_panel = ChunkPanel(), ExplainPanel(), TurnSupportPanel()
        self.whynot_panel, self.pool_panel, self.matrix_panel = WhyNotPanel(), PoolPanel(), MatrixPanel()
        self.mmr_panel, self.compare_panel = MMRPanel(), ComparePanel()
        self.docks: dict[DockId, ViewDock] = {}
        self.cases_panel = CasesPanel()
        self.setCorner(Qt.Corner.BottomLeftCorner, LEFT)  # the sliders get the window's full height
        self._dock(DockId.TUNING, self.tuning, LEFT)
        self._dock(DockId.CASES, self.cases_panel, LEFT)
        for which, w in zip(RIGHT_DOCKS, (self.chunk_panel, self.explain_panel, self.turns_panel, self.whynot_panel)):
            self._dock(which, w, RIGHT)
        for which, w in ((DockId.ROUTE_RANKS, self.matrix_panel), (DockId.CANDIDATE_POOL, self.pool_panel),
                         (DockId.MMR_TRACE, self.mmr_panel), (DockId.COMPARE, self.compare_panel)):
            self._dock(which, w, BOTTOM)
        self.docks[DockId.TUNING].raise_()
        self.docks[DockId.CHUNK].raise_()
        self.docks[DockId.ROUTE_RANKS].raise_()
        self._left_width = 0  # the left dock's width before Cases widened it
        self.docks[DockId.CASES].visibilityChanged.connect(self._fit_left_dock)
        self.store_label = QLabel("no store")
        self.model_label = QLabel("")
        self.statusBar().addPermanentWidget(self.model_label)
        self.statusBar().addPermanentWidget(self.store_label)

    def _dock(self, which: DockId, widget: QWidget, area: Qt.DockWidgetArea) -> ViewDock:
        dock = ViewDock(which, widget, self)
        first = next((d for d in self.docks.values() if self.dockWidgetArea(d) == area), None)
        self.addDockWidget(area, dock)
        if first is not None:
            self.tabifyDockWidget(first, dock)
        self.docks[which] = dock
        return dock

    def _connect(self) -> None:
        ctx = self.ctx
        ctx.error_raised.connect(self.report_error)
        self.query_edit.returnPressed.connect(self.queries.run_query)
        self.query_edit.textEdited.connect(self.queries.query_edited)
        self.run_button.clicked.connect(lambda _checked=False: self.queries.run_query())  # clicked(bool) is no gold list
        self.user_combo.currentTextChanged.connect(self.queries.user_picked)
        self.tuning.error_raised.connect(lambda e: self.report_error(e, "Presets"))
        ctx.session.rerank_failed.connect(lambda e: self.report_error(e, "Re-ranking"))
        self.whynot_panel.pin_requested.connect(ctx.session.pin)
        self.whynot_panel.unpin_requested.connect(ctx.session.unpin)
        for panel in (self.results, self.pool_panel, self.matrix_panel, self.mmr_panel, self.turns_panel,
                      self.whynot_panel, self.compare_panel):
            panel.chunk_selected.connect(self.inspector.focus_chunk)
        self.inspector.connect()
        self.judging.connect()
        self.comparisons.connect()
        self.memsense.connect()
        self.whatif.connect()
        self.cases.connect()
        self.applying.connect()
        self.history.connect()
        self.picker.connect_signals()
        self.cases_panel.run_values = self.picker.runs.across  # a case's metric in each kept run
        self.picker.runs.changed.connect(self.cases_panel.show_details)
        self.recent.connect()

    def dock(self, which: DockId) -> ViewDock | None:
        """The dock `which`; None for a view not added (Evaluation, Production)."""
        return self.docks.get(which)

    def all_docks(self) -> list[ViewDock]:
        return list(self.docks.values())

    def raise_dock(self, which: DockId) -> None:
        """Show `which`: in the current layout if it holds it, else in the task layout that does."""
        self.layouts.show_dock(which)

    def showing(self, which: DockId) -> bool:
        """On screen: added, not closed and not a tab behind another dock."""
        dock = self.docks.get(which)
        return dock is not None and not dock.visibleRegion().isEmpty()

    def add_view(self, which: DockId, widget: QWidget, area: Qt.DockWidgetArea = BOTTOM) -> ViewDock:
        """Add a view (e.g. the Evaluation view) as a dock: where the current task layout puts it
        (`area` if it has no place there), hidden if it belongs to another layout."""
        dock = ViewDock(which, widget, self)
        self.docks[which] = dock
        self.layouts.added(dock, area)
        keep_columns(widget, self.ctx.settings)
        self.menus.view.insertAction(self.menus.view.actions()[len(self.docks) - 1], dock.toggleViewAction())
        self._follow_menu(dock)
        return dock

    def _follow_menu(self, dock: ViewDock) -> None:
        """A view opened from the View menu brings up the task layout that holds it."""
        def opened(checked: bool) -> None:
            if checked and dock.id in HOME and dock.id not in PLANS[self.layouts.current].docks:
                dock.hide()
                self.layouts.show_dock(dock.id)

        dock.toggleViewAction().triggered.connect(opened)

    # ==== appearance and layout =====================================================================
    def set_dark(self, dark: bool) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply(app, dark)
        self.menus.dark.setChecked(dark)
        self.ctx.settings.setValue("view/dark", dark)
        self.results.plot.apply_theme()
        self.mmr_panel.plot.apply_theme()
        self.matrix_panel.apply_theme()
        self.tuning.apply_theme()
        for model in (self.results.model, self.pool_panel.model, self.mmr_panel.model, self.compare_panel.model,
                      self.whynot_panel.pins_model, self.whynot_panel.search_model):
            model.refresh()
        self.inspector.theme_changed()

    def restore_layout(self) -> None:
        """The window's size and the task layout last used, as the user left it (Inspect at first)."""
        geometry = self.ctx.settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:  # first run: the default size, but never larger than the screen (a 1280x720 laptop)
            screen = self.screen().availableGeometry()
            self.resize(min(DEFAULT_SIZE[0], screen.width()), min(DEFAULT_SIZE[1], screen.height()))
        self.layouts.restore()
        keep_columns(self, self.ctx.settings)
        self.set_dark(str(self.ctx.settings.value("view/dark", "false")).lower() == "true")

    def default_layout(self) -> None:
        """The current task layout back to its plan (View → Reset layout)."""
        self.layouts.reset()

    def _fit_left_dock(self, cases_shown: bool) -> None:
        """Raising Cases widens the left dock until its key columns show whole (at most 45 % of the
        window: at 1280×720 the Tuning width cuts them); raising Tuning again gives its width back."""
        cases = self.docks[DockId.CASES]
        if self.dockWidgetArea(cases) != LEFT or cases.isFloating():
            return
        if cases_shown:
            now = cases.width()
            want = min(self.cases_panel.key_width() + (now - self.cases_panel.width()), int(self.width() * 0.45))
            if want > now:
                self._left_width = self._left_width or now
                self.resizeDocks([cases], [want], Qt.Orientation.Horizontal)
        elif self._left_width:
            self.resizeDocks([self.docks[DockId.TUNING]], [self._left_width], Qt.Orientation.Horizontal)
            self._left_width = 0

    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(SHORTCUTS, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def report_error(self, exc: BaseException, context: str = "") -> None:
        """Every error ends here: a dialog that says what to do; the window stays usable."""
        box = show_error(self, exc, context)
        self.ctx.error_reported.emit(box.text())

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.ctx.current.flush()
        self.ctx.settings.setValue("window/geometry", self.saveGeometry())
        self.layouts.save()
        save_columns(self, self.ctx.settings)
        self.ctx.settings.sync()
        self.ctx.closing.emit()
        self.stores.shut_down()
        heap.release()
        super().closeEvent(event)
