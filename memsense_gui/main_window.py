"""The main window: pick a user, ask, see why, tune live.

The window owns no retrieval logic: an engine (core.engine.Engine, or any object with the
same methods) recalls on a worker thread, a `QuerySession` re-ranks the cached pool, and the
panels show the `Ranking`. Hooks for other views: `add_view(title, widget)` and the slot
`open_question(user_id, query, gold_session_ids)`. Grades marked with 0-3 go to the open
store's judged set (`judging.AppJudgments`), saved at once.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication, QComboBox, QDockWidget, QFileDialog, QInputDialog, QLabel, QLineEdit, QMainWindow, QMenu, QPushButton,
    QSizePolicy, QToolBar, QWidget,
)

from core import config as config_io
from core.atomic import write_text_atomic
from core.config import Config
from core.errors import MemsenseError
from core.judged import write_run
from core.presets import MEMSENSE, PresetStore
from core.rerank import Ranking, rerank
from core.types import Chunk
from memsense_gui import paths, tasks, theme
from memsense_gui.dialogs import NewStoreDialog, ProgressDialog, ShortcutsDialog, show_error
from memsense_gui.judging import GRADE_LABELS, NOTHING_JUDGED, AppJudgments
from memsense_gui.models import short_id
from memsense_gui.panels import (
    ChunkPanel, ComparePanel, ExplainPanel, MatrixPanel, MMRPanel, PoolPanel, ResultsPanel, TurnSupportPanel,
    WhyNotPanel, explain_record, select_id, selected_id,
)
from memsense_gui.plots import export_plot, write_png, write_svg
from memsense_gui.session import QuerySession
from memsense_gui.tuning import PresetLibrary, TuningPanel

EngineFactory = Callable[[str], Any]
LEVEL_FILTERS = {
    "TREC, memory level: the graded chunks (*.txt *.qrels *.run)": "memory",
    "TREC, session level: what the metrics score (*.txt *.qrels *.run)": "session",
}

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
    ("Ctrl+R", "Reset every knob to the selected preset"),
    ("Ctrl+Shift+S", "Save the current settings as a preset"),
    ("Ctrl+Shift+C", "Compare two presets"),
    ("Ctrl+E", "Export results (JSON)"),
    ("Ctrl+Shift+E", "Export settings (TOML or JSON)"),
    ("Ctrl+O", "Open a store"),
    ("Ctrl+N", "Build a new store"),
    ("Ctrl+Shift+D", "Toggle dark appearance"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
]


def default_engine_factory(location: str) -> Any:
    from core.engine import Engine

    return Engine(location)


def default_store_builder(*args: Any, **kwargs: Any) -> Any:
    from core.engine import build_store

    return build_store(*args, **kwargs)


class MainWindow(QMainWindow):
    store_opened = Signal(str)  # location
    users_loaded = Signal(list)
    chunks_loaded = Signal(str)  # user id
    model_loaded = Signal()
    recall_started = Signal(str)  # query
    recall_finished = Signal(object)  # RecallPool
    ranking_updated = Signal(object)  # Ranking, after every panel was updated
    store_built = Signal(str)  # location
    error_reported = Signal(str)  # the message shown
    run_exported = Signal(str)  # path of a TREC run written

    def __init__(self, home: Path, settings: QSettings | None = None, *,
                 engine_factory: EngineFactory | None = None, store_builder: Callable[..., Any] | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.home = Path(home)
        self.settings = settings or paths.settings(self.home)
        self.engine_factory = engine_factory or default_engine_factory
        self.store_builder = store_builder or default_store_builder
        self.engine: Any = None
        self.location: str | None = None
        self.users: list[str] = []
        self.user_id: str | None = None
        self.user_chunks: dict[str, Chunk] = {}
        self.model_ready = False
        self.focused_id: str | None = None
        self.progress: ProgressDialog | None = None
        self._serial = 0
        self._recall_task: tasks.Task | None = None
        self._autorun = False
        self._stale: set[str] = set()
        self._chunk_key: tuple = ()
        self.engine_runner = tasks.TaskRunner("memsense-engine", self)
        self.ingest_runner = tasks.TaskRunner("memsense-ingest", self)
        self.session = QuerySession(parent=self)
        self.judgments = AppJudgments(self)
        self.presets = PresetLibrary(self._preset_store(), self)
        self.setWindowTitle("memsense")
        self.setDockNestingEnabled(True)
        self._build_ui()
        self._build_menus()
        self._connect()
        self._restore_config()

    # ==== construction ==========================================================================
    def _preset_store(self) -> PresetStore:
        path = paths.presets_file(self.home)
        try:
            return PresetStore(path)
        except MemsenseError as exc:
            QTimer.singleShot(0, lambda error=exc: self.report_error(error, "Your presets"))
            return PresetStore(path.with_name("presets.recovered.json"))

    def _build_ui(self) -> None:
        self.user_combo = QComboBox()
        self.user_combo.setObjectName("user-combo")
        self.user_combo.setMinimumContentsLength(10)
        self.user_combo.setToolTip("The user: one conversation, one memory (Ctrl+U)")
        self.query_edit = QLineEdit()
        self.query_edit.setObjectName("query-edit")
        self.query_edit.setPlaceholderText("Ask the memory… (Ctrl+L, Enter to run)")
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.run_button = QPushButton("Search")
        self.run_button.setToolTip("Recall and rank (Enter or Ctrl+Return)")
        bar = QToolBar("Query")
        bar.setObjectName("toolbar-query")
        bar.setMovable(False)
        bar.addWidget(QLabel(" User "))
        bar.addWidget(self.user_combo)
        bar.addWidget(QLabel("  Query "))
        bar.addWidget(self.query_edit)
        bar.addWidget(self.run_button)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)

        self.results = ResultsPanel()
        self.setCentralWidget(self.results)
        self.tuning = TuningPanel(self.presets)
        self.tuning.setMinimumWidth(300)
        self.chunk_panel = ChunkPanel()
        self.explain_panel = ExplainPanel()
        self.turns_panel = TurnSupportPanel()
        self.whynot_panel = WhyNotPanel()
        self.pool_panel = PoolPanel()
        self.matrix_panel = MatrixPanel()
        self.mmr_panel = MMRPanel()
        self.compare_panel = ComparePanel()
        L, R, B = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                   Qt.DockWidgetArea.BottomDockWidgetArea)
        self.docks: dict[str, QDockWidget] = {}
        self._dock("Tuning", self.tuning, L)
        for title, w in (("Chunk", self.chunk_panel), ("Explain", self.explain_panel),
                         ("Turn support", self.turns_panel), ("Why not?", self.whynot_panel)):
            self._dock(title, w, R)
        for title, w in (("Route ranks", self.matrix_panel), ("Candidate pool", self.pool_panel),
                         ("MMR trace", self.mmr_panel), ("Compare", self.compare_panel)):
            self._dock(title, w, B)
        self.docks["Chunk"].raise_()
        self.docks["Route ranks"].raise_()
        self._default_state = self.saveState()
        self.store_label = QLabel("no store")
        self.model_label = QLabel("")
        self.statusBar().addPermanentWidget(self.model_label)
        self.statusBar().addPermanentWidget(self.store_label)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-').rstrip('?')}")
        dock.setWidget(widget)
        first = next((d for d in self.docks.values() if self.dockWidgetArea(d) == area), None)
        self.addDockWidget(area, dock)
        if first is not None:
            self.tabifyDockWidget(first, dock)
        self.docks[title] = dock
        return dock

    def _action(self, menu: QMenu, text: str, slot: Callable, shortcut: str | QKeySequence | None = None,
                tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(lambda *_: slot())
        menu.addAction(action)
        self.addAction(action)
        return action

    def _build_menus(self) -> None:
        m = self.menuBar().addMenu("&File")
        self._action(m, "&Open store…", self.ask_open_store, "Ctrl+O", "Open a memory store folder")
        self._action(m, "Open Qdrant &server…", self.ask_open_server, tip="Open a store served by Qdrant (http URL)")
        self._action(m, "&New store…", self.ask_new_store, "Ctrl+N", "Build a store from LoCoMo or JSONL")
        self._action(m, "Open the &demo store", self.open_demo_store, tip="Open (building if needed) the demo store")
        m.addSeparator()
        self._action(m, "&Import settings…", self.ask_import_config, tip="Load settings from TOML or JSON")
        self._action(m, "Export &settings…", self.ask_export_config, "Ctrl+Shift+E", "Save settings as TOML or JSON")
        self._action(m, "Export &results…", self.ask_export_results, "Ctrl+E", "Save results with explain as JSON")
        self._action(m, "Export results as TREC r&un…", self.ask_export_run,
                     tip="The current settings' results for every question judged in the app")
        self._action(m, "Export &judged questions as TREC qrels…", self.ask_export_qrels,
                     tip="The grades marked in the app on this store")
        self._action(m, "Import &TREC qrels…", self.ask_import_qrels,
                     tip="Grades for this store's judged questions (e.g. qrels exported before)")
        plots = m.addMenu("Export &plot")
        self._action(plots, "Contribution bars…", lambda: self.ask_export_plot("contributions"))
        self._action(plots, "MMR terms…", lambda: self.ask_export_plot("mmr"))
        self._action(plots, "Route-rank matrix…", lambda: self.ask_export_plot("matrix"))
        m.addSeparator()
        self._action(m, "&Quit", self.close, "Ctrl+Q")

        q = self.menuBar().addMenu("&Query")
        self._action(q, "Focus &query", self.focus_query, "Ctrl+L")
        self._action(q, "&Run", self.run_query, "Ctrl+Return")
        self._action(q, "&Next result", lambda: self.results.step(1), "Alt+Down")
        self._action(q, "&Previous result", lambda: self.results.step(-1), "Alt+Up")
        self._action(q, "Focus &user", self.user_combo.setFocus, "Ctrl+U")
        self._action(q, "&Why not?…", self.focus_why_not, "Ctrl+F")
        self._action(q, "P&in selected chunk", self.pin_focused, "Ctrl+P")
        q.addSeparator()
        for grade, label in GRADE_LABELS.items():
            action = self._action(q, f"Grade selected result &{grade} ({label})",
                                  lambda g=grade: self.grade_selected(g), str(grade))
            # a bare digit must not steal typing from other widgets: only the two tables take it
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            self.results.view.addAction(action)
            self.pool_panel.view.addAction(action)

        t = self.menuBar().addMenu("&Tuning")
        self._action(t, "&Reset to preset", lambda: self.tuning.apply_preset(self.tuning.preset_combo.currentText()),
                     "Ctrl+R")
        self._action(t, "&Save settings as preset…", self.tuning.ask_save_preset, "Ctrl+Shift+S")
        self._action(t, "&Compare presets", lambda: self._raise("Compare"), "Ctrl+Shift+C")

        v = self.menuBar().addMenu("&View")
        self.dark_action = self._action(v, "&Dark appearance", lambda: self.set_dark(self.dark_action.isChecked()),
                                        "Ctrl+Shift+D")
        self.dark_action.setCheckable(True)
        v.addSeparator()
        for dock in self.docks.values():
            v.addAction(dock.toggleViewAction())
        v.addSeparator()
        self._action(v, "Restore default &layout", self.default_layout)
        self.view_menu = v

        h = self.menuBar().addMenu("&Help")
        self._action(h, "&Shortcuts", self.show_shortcuts, "F1")

    def _connect(self) -> None:
        self.query_edit.returnPressed.connect(self.run_query)
        self.run_button.clicked.connect(self.run_query)
        self.user_combo.currentTextChanged.connect(self._user_picked)
        self.tuning.config_edited.connect(self.session.request_config)
        self.tuning.error_raised.connect(lambda e: self.report_error(e, "Presets"))
        self.session.config_changed.connect(self._config_applied)
        self.session.ranking_changed.connect(self._show_ranking)
        self.session.pool_changed.connect(lambda pool: pool is None and self._show_ranking(None))
        self.session.rerank_failed.connect(lambda e: self.report_error(e, "Re-ranking"))
        self.session.pins_changed.connect(lambda _p: self._refresh_pins())
        self.judgments.grades_changed.connect(self._show_grades)
        for panel in (self.results, self.pool_panel, self.matrix_panel, self.mmr_panel, self.turns_panel,
                      self.whynot_panel, self.compare_panel):
            panel.chunk_selected.connect(self.focus_chunk)
        self.whynot_panel.pin_requested.connect(self.session.pin)
        self.whynot_panel.unpin_requested.connect(self.session.unpin)
        self.presets.presets_changed.connect(self._fill_compare)
        self.compare_panel.selection_changed.connect(self._update_compare)
        self._panel_updaters: dict[str, Callable[[Ranking | None], None]] = {
            "Route ranks": lambda r: self.matrix_panel.set_ranking(r, self.session.gold, self.session.pins),
            "Candidate pool": self._update_pool,
            "MMR trace": self.mmr_panel.set_ranking,
            "Why not?": lambda r: self.whynot_panel.set_ranking(r, self.session.pins),
            "Compare": lambda r: self._update_compare(),
        }
        for title in ("Chunk", "Explain", "Turn support", *self._panel_updaters):
            self.docks[title].visibilityChanged.connect(lambda on, t=title: self._dock_shown(t, on))
        self._fill_compare()

    # ==== store, model, users ===================================================================
    def open_store(self, location: str | Path) -> tasks.Task:
        """Open a store on the engine thread; `store_opened` then the model loads in the background."""
        location = str(location)
        self._close_engine()
        self.statusBar().showMessage(f"Opening {location}…")
        return self.engine_runner.submit("open store", tasks.open_store, self.engine_factory, location,
                                         succeeded=self._store_ready,
                                         failed=lambda e: self._store_failed(e, location))

    def _store_ready(self, opened: tasks.OpenedStore) -> None:
        self.engine, self.location = opened.engine, opened.location
        self.settings.setValue("store/last", opened.location)
        self.store_label.setText(f"store: {opened.location}")
        self.setWindowTitle(f"memsense — {Path(opened.location).name}")
        self.statusBar().showMessage(f"Opened {opened.location}", 4000)
        self.users = list(opened.users)
        self._open_judgments(opened.location)
        last_user = self.settings.value("query/user", "")
        self.user_combo.blockSignals(True)
        self.user_combo.clear()
        self.user_combo.addItems(self.users)
        self.user_combo.setCurrentText(last_user if last_user in self.users else self.users[0])
        self.user_combo.blockSignals(False)
        self._user_picked(self.user_combo.currentText(), rerun=False)
        self.store_opened.emit(opened.location)
        self.users_loaded.emit(self.users)
        self._load_model()
        if self._autorun and self.query_edit.text().strip():
            self.run_query()
        self._autorun = False

    def _store_failed(self, exc: BaseException, location: str) -> None:
        self.statusBar().showMessage("No store open: File > Open store… or File > New store…")
        self.report_error(exc, f"Opening the store {location}")

    def _load_model(self) -> None:
        self.model_ready = False
        self.model_label.setText("model: loading…")
        engine = self.engine
        self.engine_runner.submit("load model", tasks.load_model, engine,
                                  succeeded=lambda _r: self._model_ready(engine),
                                  failed=lambda e: self._model_failed(e))

    def _model_ready(self, engine: Any) -> None:
        if engine is not self.engine:
            return
        self.model_ready = True
        self.model_label.setText("model: ready")
        self.model_loaded.emit()

    def _model_failed(self, exc: BaseException) -> None:
        self.model_label.setText("model: not loaded")
        self.report_error(exc, "Loading the embedding model")

    def _close_engine(self) -> None:
        if self.engine is not None:
            self.engine_runner.submit("close store", tasks.close_engine, self.engine,
                                      failed=lambda e: self.report_error(e, "Closing the store"))
        self.engine = None
        self.location = None
        self.model_ready = False
        self.session.set_pool(None)

    def _user_picked(self, user_id: str, rerun: bool = True) -> None:
        if not user_id or self.engine is None:
            return
        self.user_id = user_id
        self.settings.setValue("query/user", user_id)
        self.user_chunks = {}
        self.whynot_panel.set_chunks(())
        self.engine_runner.submit("chunks", tasks.user_chunks, self.engine, user_id,
                                  succeeded=self._chunks_ready, failed=lambda e: self.report_error(e, "Listing chunks"))
        if rerun and self.query_edit.text().strip():
            self.run_query()

    def _chunks_ready(self, result: tuple[str, tuple[Chunk, ...]]) -> None:
        user_id, chunks = result
        if user_id != self.user_id:
            return
        self.user_chunks = {c.memory_id: c for c in chunks}
        self.whynot_panel.set_chunks(chunks)
        self.chunks_loaded.emit(user_id)

    def ask_open_store(self) -> None:
        start = str(paths.stores_dir(self.home))
        path = QFileDialog.getExistingDirectory(self, "Open a memory store", start)
        if path:
            self.open_store(path)

    def ask_open_server(self) -> None:
        url, ok = QInputDialog.getText(self, "Open Qdrant server", "Server URL:", text="http://localhost:6333")
        if ok and url.strip():
            self.open_store(url.strip())

    def open_demo_store(self) -> None:
        demo = paths.demo_store_dir(self.home)
        if demo.is_dir() and any(demo.iterdir()):
            self.open_store(demo)
        else:
            self.build_demo_store()

    def build_demo_store(self) -> tasks.Task | None:
        try:
            from core.engine import DEMO_DATASET
        except ImportError as exc:
            self.report_error(MemsenseError(f"the retrieval engine is not installed ({exc}); reinstall the project"))
            return None
        return self.build_store(Path(DEMO_DATASET), paths.demo_store_dir(self.home), "hybrid",
                                title="Building the demo store (first run)")

    def ask_new_store(self) -> None:
        dialog = NewStoreDialog(paths.stores_dir(self.home), self)
        if dialog.exec():
            self.build_store(*dialog.values())

    def build_store(self, dataset: Path, location: Path, mode: str = "hybrid", *, title: str = "Building a store",
                    open_after: bool = True) -> tasks.Task:
        """Ingest on the ingest thread with a progress dialog and a working Cancel button."""
        self.progress = ProgressDialog(title, self)
        self.progress.setLabelText(f"Reading {Path(dataset).name}…")
        task = self.ingest_runner.submit(
            "build store", tasks.build_store, self.store_builder, dataset, location, mode,
            progressed=self.progress.report,
            succeeded=lambda _stats: self._store_built(location, open_after),
            failed=lambda e: self._build_failed(e, location))
        self.progress.canceled.connect(task.cancel)
        self.progress.canceled.connect(lambda: self.progress and self.progress.setLabelText("Cancelling…"))
        self.progress.show()
        return task

    def _close_progress(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress.deleteLater()
            self.progress = None

    def _store_built(self, location: Path, open_after: bool) -> None:
        self._close_progress()
        self.statusBar().showMessage(f"Built {location}", 5000)
        self.store_built.emit(str(location))
        if open_after:
            self.open_store(location)

    def _build_failed(self, exc: BaseException, location: Path) -> None:
        self._close_progress()
        if isinstance(exc, tasks.Cancelled) or str(exc).strip().lower().startswith("cancelled"):
            self.statusBar().showMessage(f"Building {location} was cancelled", 5000)
            return
        self.report_error(exc, f"Building the store {location}")

    # ==== query =================================================================================
    def focus_query(self) -> None:
        self.query_edit.setFocus()
        self.query_edit.selectAll()

    @Slot()
    def run_query(self, gold: Iterable[str] = ()) -> tasks.Task | None:
        """Recall on the engine thread; the newest request wins (older results are dropped)."""
        query = self.query_edit.text().strip()
        if self.engine is None:
            self.statusBar().showMessage("Open a store first (File > Open store…)", 5000)
            return None
        if not query or not self.user_id:
            self.statusBar().showMessage("Type a query first", 3000)
            return None
        self._serial += 1
        if self._recall_task is not None and not self._recall_task.done:
            self._recall_task.cancel()
        request = tasks.RecallRequest(self._serial, self.user_id, query, frozenset(gold))
        waiting = "" if self.model_ready else " (waiting for the model to load)"
        self.statusBar().showMessage(f"Searching “{query}”{waiting}…")
        self.settings.setValue("query/text", query)
        self.recall_started.emit(query)
        self._recall_task = self.engine_runner.submit("recall", tasks.recall, self.engine, request,
                                                      succeeded=self._recalled, failed=self._recall_failed)
        return self._recall_task

    def _recalled(self, result: tasks.RecallResult) -> None:
        if result.request.serial != self._serial:
            return  # a newer query was asked meanwhile
        pool = result.pool
        self.focused_id = None
        self.session.set_pool(pool, result.request.gold)
        timing = ", ".join(f"{k} {v:.0f} ms" for k, v in pool.timings_ms.items())
        self.statusBar().showMessage(f"Recalled {pool.size} chunks" + (f" ({timing})" if timing else ""), 6000)
        self.recall_finished.emit(pool)
        self.results.select_position(0)

    def _recall_failed(self, exc: BaseException) -> None:
        if isinstance(exc, tasks.Cancelled):
            return
        self.statusBar().clearMessage()
        self.report_error(exc, "Searching")

    @Slot(str, str, object)
    def open_question(self, user_id: str, query: str, gold_session_ids: Iterable[str] = ()) -> tasks.Task | None:
        """Run `query` for `user_id` and mark the gold sessions (ids or numbers) everywhere."""
        if user_id not in self.users:
            self.report_error(MemsenseError(f"user {user_id!r} is not in this store; open the store that holds it"))
            return None
        if self.user_combo.currentText() != user_id:
            self.user_combo.blockSignals(True)
            self.user_combo.setCurrentText(user_id)
            self.user_combo.blockSignals(False)
            self._user_picked(user_id, rerun=False)
        self.query_edit.setText(query)
        return self.run_query(gold=frozenset(str(g) for g in gold_session_ids))

    # ==== ranking -> panels =====================================================================
    def _config_applied(self, cfg: Config) -> None:
        if cfg != self.tuning.config:
            self.tuning.set_config(cfg)
        self.settings.setValue("tuning/config", config_io.dumps(cfg, "json"))

    def _show_ranking(self, ranking: Ranking | None) -> None:
        """Results and bars at once; every other panel now if it is on screen, else when shown."""
        s = self.session
        previous = s.baseline.result_ids if s.baseline is not None else None
        self.results.model.set_grades(self.current_grades())
        self.results.set_ranking(ranking, previous, s.gold, s.pins, ranking.pool.query if ranking else "")
        for title in self._panel_updaters:
            self._update_panel(title)
        self._show_focus(self.focused_id)
        if ranking is not None:
            self.ranking_updated.emit(ranking)

    def _showing(self, title: str) -> bool:
        """On screen: not closed and not a tab behind another dock."""
        return not self.docks[title].visibleRegion().isEmpty()

    def _update_panel(self, title: str, force: bool = False) -> None:
        if not (force or self._showing(title)):
            self._stale.add(title)
            return
        self._stale.discard(title)
        self._panel_updaters[title](self.session.ranking)

    def _update_pool(self, ranking: Ranking | None) -> None:
        s = self.session
        self.pool_panel.model.set_grades(self.current_grades())
        self.pool_panel.set_ranking(ranking, s.gold, s.pins)
        if self.focused_id:
            self.pool_panel.view.selectionModel().blockSignals(True)
            select_id(self.pool_panel.view, self.focused_id)
            self.pool_panel.view.selectionModel().blockSignals(False)

    def _dock_shown(self, title: str, visible: bool) -> None:
        if not visible or title not in self._stale:
            return
        if title in self._panel_updaters:
            self._update_panel(title, force=True)
        else:
            self._show_focus(self.focused_id)

    def _refresh_pins(self) -> None:
        if self.session.ranking is not None:
            self._show_ranking(self.session.ranking)
        else:
            self.whynot_panel.set_ranking(None, self.session.pins)

    @Slot(str)
    def focus_chunk(self, memory_id: str) -> None:
        """Show one chunk in the chunk, explain and turn-support panels; select it everywhere."""
        self.focused_id = memory_id
        self.matrix_panel.set_focus(memory_id)
        for view in (self.results.view, self.pool_panel.view):
            view.selectionModel().blockSignals(True)
            select_id(view, memory_id)
            view.selectionModel().blockSignals(False)
            view.viewport().update()
        self._show_focus(memory_id)

    def _show_focus(self, memory_id: str | None, force: bool = False) -> None:
        """Chunk, explain and turn-support panels follow the focused chunk; hidden ones (tabbed
        away) are brought up to date when they are shown, which keeps slider ticks cheap."""
        ranking = self.session.ranking
        if memory_id is None:
            return
        for title, show in (("Chunk", self._show_chunk), ("Explain", self._show_explain),
                            ("Turn support", self._show_turns)):
            if force or self._showing(title):
                show(ranking, memory_id)
                self._stale.discard(title)
            else:
                self._stale.add(title)

    def _show_chunk(self, ranking: Ranking | None, memory_id: str | None) -> None:
        chunk = self.chunk(memory_id) if memory_id else None
        neighbors, fate = (None, None), ""
        if ranking is not None and chunk is not None:
            neighbors = ranking.pool.neighbors.get(memory_id, (None, None))
            f = ranking.fate(memory_id)
            fate = f"{f.status}: {f.reason}"
        key = (memory_id, fate, theme.current().dark)
        if key != self._chunk_key:  # re-render only when something shown changed
            self._chunk_key = key
            self.chunk_panel.show_chunk(chunk, neighbors, fate)

    def _show_explain(self, ranking: Ranking | None, memory_id: str | None) -> None:
        record = explain_record(ranking, memory_id) if ranking is not None and memory_id else None
        self.explain_panel.show_record(record)

    def _show_turns(self, ranking: Ranking | None, memory_id: str | None) -> None:
        self.turns_panel.show_row(ranking, memory_id)

    def chunk(self, memory_id: str) -> Chunk | None:
        pool = self.session.pool
        if pool is not None:
            i = pool.index_of(memory_id)
            if i is not None:
                return pool.chunks[i]
            if memory_id in pool.neighbor_chunks:
                return pool.neighbor_chunks[memory_id]
        return self.user_chunks.get(memory_id)

    def pin_focused(self) -> None:
        mid = selected_id(self.whynot_panel.search_view) if self.whynot_panel.search_view.hasFocus() else None
        mid = mid or self.focused_id
        if mid:
            self.session.pin(mid)
            self.statusBar().showMessage(f"Pinned {mid}: see its fate in Why not?", 4000)

    def focus_why_not(self) -> None:
        self._raise("Why not?")
        self.whynot_panel.search.setFocus()
        self.whynot_panel.search.selectAll()

    def _raise(self, title: str) -> None:
        dock = self.docks[title]
        dock.show()
        dock.raise_()

    # ==== judging ================================================================================
    def _open_judgments(self, location: str) -> None:
        try:
            self.judgments.open(paths.judged_file(self.home, location))
        except MemsenseError as exc:
            self.report_error(exc, f"Your judged questions (kept as they are; new grades go to {self.judgments.path})")

    def current_grades(self) -> dict[str, int]:
        """Memory id -> grade marked for the query on screen."""
        pool = self.session.pool
        return self.judgments.grades(pool.user_id, pool.query) if pool is not None else {}

    def _show_grades(self) -> None:
        grades = self.current_grades()
        self.results.model.set_grades(grades)
        self.pool_panel.model.set_grades(grades)

    def grade_selected(self, grade: int) -> bool:
        """Grade the selected result's (or pool candidate's) chunk for the current user and query."""
        pool = self.session.pool
        view = next((v for v in (self.results.view, self.pool_panel.view) if v.hasFocus()), None)
        memory_id = (selected_id(view) if view is not None else None) or self.focused_id
        if pool is None or not memory_id:
            self.statusBar().showMessage("Run a query and select a result first, then press 0-3", 4000)
            return False
        ok = self._try(lambda: self.judgments.set_grade(pool.user_id, pool.query, memory_id, grade), "Grading")
        if ok:
            self.statusBar().showMessage(f"{short_id(memory_id, pool.user_id)}: grade {grade} "
                                         f"({GRADE_LABELS[grade]}) for “{pool.query}”, saved", 4000)
        return ok

    def export_qrels(self, path: str | Path, level: str = "memory") -> bool:
        def write() -> None:
            n = self.judgments.export_qrels(path, level)
            self.statusBar().showMessage(f"Wrote {n} judgments ({level} level) to {path}", 5000)

        return self._try(write, "Exporting qrels")

    def import_qrels(self, path: str | Path) -> bool:
        def read() -> None:
            judgments, questions = self.judgments.import_qrels(path)
            self.statusBar().showMessage(f"Imported {judgments} judgments for {questions} questions", 5000)

        return self._try(read, "Importing qrels")

    def export_run(self, path: str | Path, level: str = "memory") -> tasks.Task | None:
        """Recall every question judged on this store (on the engine thread), re-rank it with the
        current settings and write the results as a TREC run; `run_exported` when written."""
        questions = [q for q in self.judgments.questions if q.user_id in self.users]
        if self.engine is None or not questions:
            self.report_error(MemsenseError("open a store first" if self.engine is None else NOTHING_JUDGED),
                              "Exporting a run")
            return None
        cfg, tag = self.session.config, self._settings_name()
        self.statusBar().showMessage(f"Running {len(questions)} judged questions with “{tag}”…")
        return self.engine_runner.submit("trec run", tasks.preset_run, self.engine, questions, cfg, level,
                                         succeeded=lambda entries: self._write_run(entries, path, tag),
                                         failed=lambda e: self.report_error(e, "Exporting a run"))

    def _write_run(self, entries: dict, path: str | Path, tag: str) -> None:
        if self._try(lambda: write_run(entries, path, tag), "Exporting a run"):
            self.statusBar().showMessage(f"Wrote the run “{tag}” for {len(entries)} questions to {path}", 5000)
            self.run_exported.emit(str(path))

    def _settings_name(self) -> str:
        """The selected preset's name, marked when the knobs no longer match it."""
        name = self.tuning.preset_combo.currentText() or "settings"
        try:
            same = self.presets.get(name) == self.session.config
        except Exception:  # noqa: BLE001 - an unknown name is just "modified"
            same = False
        return name if same else f"{name}-modified"

    def _ask_level_path(self, title: str, default: str) -> tuple[str, str] | None:
        path, chosen = QFileDialog.getSaveFileName(self, title, str(Path.home() / default), ";;".join(LEVEL_FILTERS))
        return (path, LEVEL_FILTERS.get(chosen, "memory")) if path else None

    def ask_export_qrels(self) -> None:
        picked = self._ask_level_path("Export judged questions as TREC qrels", "memsense.qrels")
        if picked:
            self.export_qrels(*picked)

    def ask_import_qrels(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import TREC qrels", str(Path.home()),
                                              "TREC qrels (*.qrels *.txt);;All files (*)")
        if path:
            self.import_qrels(path)

    def ask_export_run(self) -> None:
        picked = self._ask_level_path("Export results as a TREC run", "memsense.run")
        if picked:
            self.export_run(*picked)

    # ==== compare ================================================================================
    def _fill_compare(self) -> None:
        self.compare_panel.set_names(self.presets.names())
        self._update_compare()

    def _config_named(self, name: str) -> Config:
        return self.session.config if name == ComparePanel.CURRENT else self.presets.get(name)

    def _update_compare(self) -> None:
        pool = self.session.pool
        if pool is None:
            self.compare_panel.set_rankings(None, None, frozenset())
            return
        try:
            a = rerank(pool, self._config_named(self.compare_panel.a_combo.currentText()))
            b = rerank(pool, self._config_named(self.compare_panel.b_combo.currentText()))
        except Exception as exc:  # noqa: BLE001
            self.report_error(exc, "Comparing presets")
            return
        self.compare_panel.set_rankings(a, b, self.session.gold)

    def compare(self, a: str, b: str) -> None:
        """Show presets `a` and `b` (or ComparePanel.CURRENT) side by side."""
        self._raise("Compare")
        self.compare_panel.choose(a, b)
        self._update_panel("Compare", force=True)

    # ==== settings and exports ===================================================================
    def _restore_config(self) -> None:
        text = self.settings.value("tuning/config", "")
        cfg = Config()
        if text:
            try:
                cfg = config_io.loads(str(text), "json", source="saved settings")
            except MemsenseError:
                cfg = Config()
        self.tuning.set_config(cfg)
        self.session.set_config(cfg, "restore")
        self.tuning.select_preset(MEMSENSE)
        self.query_edit.setText(str(self.settings.value("query/text", "")))

    def export_config(self, path: str | Path) -> bool:
        return self._try(lambda: config_io.save(self.session.config, path), "Exporting settings")

    def import_config(self, path: str | Path) -> bool:
        def load() -> None:
            cfg = config_io.load(path)
            self.tuning.set_config(cfg)
            self.session.set_config(cfg, "import")

        return self._try(load, "Importing settings")

    def results_document(self) -> dict[str, Any]:
        ranking = self.session.ranking
        if ranking is None:
            raise MemsenseError("there are no results yet: run a query first")
        return {"user_id": ranking.pool.user_id, "query": ranking.pool.query,
                "config": config_io.to_dict(ranking.config), "results": list(ranking.results)}

    def export_results(self, path: str | Path) -> bool:
        def write() -> None:
            text = json.dumps(self.results_document(), indent=2, ensure_ascii=False, default=_json_default)
            write_text_atomic(Path(path), text + "\n")

        return self._try(write, "Exporting results")

    def export_plot(self, which: str, path: str | Path) -> bool:
        """`which`: contributions | mmr | matrix; PNG or SVG by the file's extension."""
        def write() -> None:
            if which == "matrix":
                export_widget_image(self.matrix_panel, Path(path))
            else:
                export_plot(self.results.plot if which == "contributions" else self.mmr_panel.plot, path)

        return self._try(write, "Exporting the plot")

    def _try(self, fn: Callable[[], Any], context: str) -> bool:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a dialog
            self.report_error(exc, context)
            return False
        return True

    def _ask_path(self, title: str, filters: str, default: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, title, str(Path.home() / default), filters)
        return path or None

    def ask_export_config(self) -> None:
        path = self._ask_path("Export settings", "TOML (*.toml);;JSON (*.json)", "memsense-settings.toml")
        if path:
            self.export_config(path)

    def ask_import_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import settings", str(Path.home()), "Settings (*.toml *.json)")
        if path:
            self.import_config(path)

    def ask_export_results(self) -> None:
        path = self._ask_path("Export results", "JSON (*.json)", "memsense-results.json")
        if path:
            self.export_results(path)

    def ask_export_plot(self, which: str) -> None:
        path = self._ask_path("Export plot", "PNG image (*.png);;SVG vector (*.svg)", f"memsense-{which}.png")
        if path:
            self.export_plot(which, path)

    # ==== appearance, layout, errors ================================================================
    def set_dark(self, dark: bool) -> None:
        theme.apply(QApplication.instance(), dark)
        self.dark_action.setChecked(dark)
        self.settings.setValue("view/dark", dark)
        self.results.plot.apply_theme()
        self.mmr_panel.plot.apply_theme()
        self.matrix_panel.apply_theme()
        self.tuning.apply_theme()
        for model in (self.results.model, self.pool_panel.model, self.mmr_panel.model, self.compare_panel.model,
                      self.whynot_panel.pins_model, self.whynot_panel.search_model):
            model.refresh()
        self._chunk_key = ()
        if self.focused_id:
            self._show_focus(self.focused_id)

    def restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 940)
        if not (isinstance(state, QByteArray) and self.restoreState(state)):
            QTimer.singleShot(0, self.default_layout)
        self.set_dark(str(self.settings.value("view/dark", "false")).lower() == "true")

    def default_layout(self) -> None:
        """Docks back in place: tuning left, chunk and friends right, ranks and pool below."""
        self.restoreState(self._default_state)
        for dock in self.docks.values():
            dock.show()
        self.docks["Chunk"].raise_()
        self.docks["Route ranks"].raise_()
        self.resizeDocks([self.docks["Tuning"], self.docks["Chunk"]],
                         [max(320, self.width() // 5), max(380, self.width() // 4)], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["Route ranks"]], [int(self.height() * 0.36)], Qt.Orientation.Vertical)

    def start(self) -> None:
        """What `main()` does after showing the window: reopen the last store, or the demo one."""
        last = str(self.settings.value("store/last", "") or "")
        self._autorun = True
        if last and (last.startswith(("http://", "https://")) or Path(last).is_dir()):
            self.open_store(last)
        else:
            self.open_demo_store()

    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(SHORTCUTS, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def report_error(self, exc: BaseException, context: str = "") -> None:
        """Every error ends here: a dialog that says what to do; the window stays usable."""
        box = show_error(self, exc, context)
        self.error_reported.emit(box.text())

    def add_view(self, title: str, widget: QWidget,
                 area: Qt.DockWidgetArea = Qt.DockWidgetArea.BottomDockWidgetArea) -> QDockWidget:
        """Add a view (e.g. the Evaluation view) as a dock, tabbed with the others in `area`."""
        dock = self._dock(title, widget, area)
        self.view_menu.insertAction(self.view_menu.actions()[len(self.docks) - 1], dock.toggleViewAction())
        dock.raise_()
        return dock

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.session.flush()
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()
        self._close_progress()
        engine, self.engine = self.engine, None
        self.ingest_runner.shutdown(wait=True)  # cancels a build; it stops at its next step
        self.engine_runner.shutdown(wait=True)  # drops queued work, lets the running job finish
        if engine is not None:
            try:
                engine.close()  # no other thread uses it any more
            except Exception:  # noqa: BLE001 - closing anyway; the lock is freed at exit
                pass
        super().closeEvent(event)


def export_widget_image(widget: QWidget, path: Path) -> None:
    """A table or any widget as PNG (pixels) or SVG (vector)."""
    suffix = path.suffix.lower()
    if not path.parent.is_dir():
        raise MemsenseError(f"cannot write {path}: the folder does not exist; choose another")
    if suffix == ".png":
        write_png(widget, path)
    elif suffix == ".svg":
        write_svg(widget, path)
    else:
        raise MemsenseError(f"{path}: images are exported as .png or .svg")


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
