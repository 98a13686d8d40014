"""The menus and their shortcuts; Help > Shortcuts lists the same table that binds them."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Iterable, NamedTuple, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QMenu, QMenuBar

from memsense_gui import app_icons
from memsense_gui.state.judgments import GRADE_LABELS
from memsense_gui.views.dock import DockId, ViewDock
from memsense_gui.window.parts import Shell

if TYPE_CHECKING:
    from memsense_gui.state.context import AppContext
    from memsense_gui.views.pool import PoolPanel
    from memsense_gui.views.results import ResultsPanel
    from memsense_gui.views.tuning import TuningPanel
    from memsense_gui.window.export_actions import ExportActions
    from memsense_gui.window.help_actions import HelpActions
    from memsense_gui.window.recent_actions import RecentActions
    from memsense_gui.window.judging_actions import JudgingActions
    from memsense_gui.window.layout_notes import LayoutNotes
    from memsense_gui.window.layouts import Layouts
    from memsense_gui.window.memsense_actions import MemsenseActions
    from memsense_gui.window.query_actions import QueryActions
    from memsense_gui.window.store_actions import StoreActions


class MenuWindow(Shell, Protocol):
    """What the menus bind: the parts' commands (the menus are where they all meet), the
    tables that take the grade keys, and the window's own layout commands."""

    @property
    def ctx(self) -> AppContext: ...
    @property
    def stores(self) -> StoreActions: ...
    @property
    def exports(self) -> ExportActions: ...
    @property
    def judging(self) -> JudgingActions: ...
    @property
    def help(self) -> HelpActions: ...
    @property
    def recent(self) -> RecentActions: ...
    @property
    def memsense(self) -> MemsenseActions: ...
    @property
    def queries(self) -> QueryActions: ...
    @property
    def tuning(self) -> TuningPanel: ...
    @property
    def results(self) -> ResultsPanel: ...
    @property
    def pool_panel(self) -> PoolPanel: ...
    @property
    def user_combo(self) -> QComboBox: ...
    @property
    def layouts(self) -> Layouts: ...
    @property
    def layout_notes(self) -> LayoutNotes: ...

    def all_docks(self) -> Iterable[ViewDock]: ...

    def set_dark(self, dark: bool) -> None: ...

    def default_layout(self) -> None: ...

    def show_shortcuts(self) -> object: ...

    def close(self) -> bool: ...

    def menuBar(self) -> QMenuBar: ...  # noqa: N802 - Qt's name

    def addAction(self, action: QAction) -> None: ...  # noqa: N802 - Qt's name


SHORTCUTS: list[tuple[str, str]] = [
    ("Ctrl+L", "Focus the query box"),
    ("Return / Ctrl+Return", "Run the query"),
    ("Alt+Down", "Next result"),
    ("Alt+Up", "Previous result"),
    ("Ctrl+U", "Focus the user (conversation) picker"),
    ("Ctrl+F", "Why not? Search the store's chunks"),
    ("Ctrl+P", "Pin the selected chunk (follow its fate)"),
    ("0 / 1 / 2 / 3", "Grade the selected result or pool candidate for this query "
                      "(0 not relevant … 3 perfect; results or pool table focused)"),
    ("Ctrl+1 / Ctrl+2 / Ctrl+3 / Ctrl+4 / Ctrl+5", "Task layouts: Inspect, Evaluate, Tune, Diagnose, Production (each kept as you leave it)"),
    ("Ctrl+Shift+M", "Maximise the focused view; again: the layout back"),
    ("Ctrl+Z", "Undo a settings change: a knob (a slider drag is one step), a preset, an applied suggestion, "
               "imported settings"),
    ("Ctrl+Shift+Z", "Redo"),
    ("Ctrl+R", "Reset every knob to the selected preset (its diff first)"),
    ("Ctrl+Shift+S", "Save the current settings as a preset"),
    ("Ctrl+Shift+C", "Compare two presets"),
    ("Ctrl+Shift+F", "Find a fix for the cases selected in Cases or Diagnose"),
    ("Ctrl+E", "Export results (JSON)"),
    ("Ctrl+Shift+E", "Export settings (TOML or JSON)"),
    ("Ctrl+O", "Open a store"),
    ("Ctrl+N", "Build a new store"),
    ("Ctrl+Shift+D", "Toggle dark appearance"),
    ("F1", "Glossary: the term of the column under the mouse, or of the focused table's cell"),
    ("Ctrl+/", "This list"),
    ("Ctrl+Q", "Quit"),
]


def add_action(window: MenuWindow, menu: QMenu, text: str, slot: Callable, shortcut: str | None = None,
               tip: str = "") -> QAction:
    """A menu item that is also a window-wide shortcut; its object name is `action-` and its
    words (`action-open-store` for "&Open store…"), for tests and scripts to find it by."""
    action = QAction(text, window.window())
    action.setObjectName(action_name(text))
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    if tip:
        action.setStatusTip(tip)
    action.triggered.connect(lambda *_: slot())
    menu.addAction(action)
    window.addAction(action)
    return action


def action_name(text: str) -> str:
    """`action-open-store` for "&Open store…"."""
    words = re.findall(r"[a-z0-9]+", text.replace("&", "").casefold())
    return "action-" + "-".join(words)


class Menus(NamedTuple):
    view: QMenu  # added views get their toggle here
    dark: QAction  # checkable: the dark appearance
    file: QMenu  # added actions (File > Export report…) join it


def build_menus(w: MenuWindow) -> Menus:
    """File, Query, Tuning, View and Help."""
    file = _file_menu(w)
    _query_menu(w)
    t = w.menuBar().addMenu("&Tuning")
    undo = w.ctx.current.stack.createUndoAction(w.window(), "&Undo")
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = w.ctx.current.stack.createRedoAction(w.window(), "&Redo")
    redo.setShortcut(QKeySequence("Ctrl+Shift+Z"))
    for action in (undo, redo):
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        t.addAction(action)
        w.addAction(action)
    t.addSeparator()
    add_action(w, t, "&Reset to preset…", lambda: w.tuning.choose_preset(w.tuning.preset_combo.currentText()), "Ctrl+R")
    add_action(w, t, "&Save settings as preset…", w.tuning.ask_save_preset, "Ctrl+Shift+S")
    add_action(w, t, "&Compare presets", lambda: w.raise_dock(DockId.COMPARE), "Ctrl+Shift+C")
    v = w.menuBar().addMenu("&View")
    dark = add_action(w, v, "&Dark appearance", lambda: w.set_dark(dark.isChecked()), "Ctrl+Shift+D")
    dark.setCheckable(True)
    v.addSeparator()
    for dock in w.all_docks():
        v.addAction(dock.toggleViewAction())
    v.addSeparator()
    for action in w.layouts.actions.values():
        v.addAction(action)
    v.addAction(w.layouts.maximise_action)
    add_action(w, v, "&Reset layout", w.default_layout, tip="The current task layout as it was at first")
    v.addAction(w.layout_notes.show_action)
    h = w.menuBar().addMenu("&Help")
    add_action(w, h, "&Glossary", w.help.context_help, "F1",
               "Every term the app shows, with its formula and SPEC section (F1 on a column: its term)")
    add_action(w, h, "&Keyboard shortcuts", w.show_shortcuts, "Ctrl+/")
    h.addSeparator()
    add_action(w, h, "&About memsense", w.help.show_about, tip="Versions, the embedding model, the store's format")
    return Menus(v, dark, file)


def _ask_shared_runs(w: MenuWindow) -> None:
    from memsense_gui.views.shared_runs_dialog import SharedRunsDialog

    ctx = w.memsense.ctx
    if SharedRunsDialog(ctx.shared_runs, w.window()).exec():
        ctx.runs.list_runs()


def _file_menu(w: MenuWindow) -> QMenu:
    m = w.menuBar().addMenu("&File")
    s, e, j = w.stores, w.exports, w.judging
    add_action(w, m, "&Open store…", s.ask_open_store, "Ctrl+O", "Open a memory store folder")
    add_action(w, m, "Open Qdrant &server…", s.ask_open_server, tip="Open a store served by Qdrant (http URL)")
    add_action(w, m, "&New store…", s.ask_new_store, "Ctrl+N", "Build a store from LoCoMo or JSONL")
    add_action(w, m, "Open the &demo store", s.open_demo_store, tip="Open (building if needed) the demo store")
    w.recent.add_menus(m)
    add_action(w, m, "&Connect to Memsense…", w.memsense.ask_connect,
               tip="Open a live Memsense database (read-only) and show its service's results beside the app's")
    add_action(w, m, "Shared &runs…", lambda: _ask_shared_runs(w),
               tip="Keep and read runs in a team's PostgreSQL database, named by who made them")
    m.addSeparator()
    add_action(w, m, "&Import settings…", e.ask_import_config, tip="Load settings from TOML or JSON")
    add_action(w, m, "Export &settings…", e.ask_export_config, "Ctrl+Shift+E", "Save settings as TOML or JSON")
    add_action(w, m, "Export settings for &Memsense…", e.ask_export_memsense_options,
               tip="Memsense's re-rank options and top_k, and which knobs need a change to its code")
    add_action(w, m, "Export &results…", e.ask_export_results, "Ctrl+E", "Save results with explain as JSON")
    add_action(w, m, "Export results as TREC r&un…", j.ask_export_run,
               tip="The current settings' results for every question judged in the app")
    add_action(w, m, "Export &judged questions as TREC qrels…", j.ask_export_qrels,
               tip="The grades marked in the app on this store")
    add_action(w, m, "Import &TREC qrels…", j.ask_import_qrels,
               tip="Grades for this store's judged questions (e.g. qrels exported before)")
    tables = m.addMenu("Export &table as CSV")
    add_action(w, tables, "Candidate pool…", lambda: e.ask_export_table("pool"))
    add_action(w, tables, "Route-rank matrix…", lambda: e.ask_export_table("matrix"))
    add_action(w, tables, "Evaluation…", lambda: e.ask_export_table("evaluation"))
    plots = m.addMenu("Export &plot")
    add_action(w, plots, "Contribution bars…", lambda: e.ask_export_plot("contributions"))
    add_action(w, plots, "MMR terms…", lambda: e.ask_export_plot("mmr"))
    add_action(w, plots, "Route-rank matrix…", lambda: e.ask_export_plot("matrix"))
    add_action(w, plots, "Evaluation bars…", lambda: e.ask_export_plot("evaluation"))
    m.addSeparator()
    add_action(w, m, "&Quit", w.close, "Ctrl+Q")
    return m


def _query_menu(w: MenuWindow) -> None:
    q = w.menuBar().addMenu("&Query")
    add_action(w, q, "Focus &query", w.queries.focus_query, "Ctrl+L")
    add_action(w, q, "&Run", w.queries.run_query, "Ctrl+Return")
    add_action(w, q, "&Next result", lambda: w.results.step(1), "Alt+Down")
    add_action(w, q, "&Previous result", lambda: w.results.step(-1), "Alt+Up")
    add_action(w, q, "Focus &user", w.user_combo.setFocus, "Ctrl+U")
    add_action(w, q, "&Why not?…", w.queries.focus_why_not, "Ctrl+F")
    add_action(w, q, "P&in selected chunk", w.queries.pin_focused, "Ctrl+P").setIcon(app_icons.icon("pin"))
    q.addSeparator()
    for grade, label in GRADE_LABELS.items():
        action = add_action(w, q, f"Grade selected result &{grade} ({label})",
                            lambda g=grade: w.judging.grade_selected(g), str(grade))
        # a bare digit must not steal typing from other widgets: only the two tables take it
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        w.results.view.addAction(action)
        w.pool_panel.view.addAction(action)
