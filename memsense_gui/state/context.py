"""The application context: everything a view may use, handed to it explicitly.

One `AppContext` per window: the per-user data dir and settings, the open store (its engine
is used only on the engine runner's thread), the current settings and their undo stack (the
one copy of the config on screen), the query session, presets and judgments, the
question set that Cases, Evaluation and Auto-tune share (recalled once), the task runners, and
the app's events as signals. Views and window actions take the
context; none of them reaches into the window.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, QSettings, QTimer, Signal

from core.errors import MemsenseError
from core.config.presets import PresetStore
from core.evaluation.workspace import Workspace
from core.recall.pool import RecallPool
from core.recall.protocol import RecallEngine
from memsense_gui.state import paths
from memsense_gui.state.current_settings import CurrentSettings
from memsense_gui.state.evaluation_source import EvaluationSource
from memsense_gui.state.judgments import AppJudgments
from memsense_gui.state.presets import PresetLibrary
from memsense_gui.state.question_set import QuestionSets
from memsense_gui.state.run_history import RunHistory
from memsense_gui.state.shared_runs import SharedRuns
from memsense_gui.state.session import QuerySession
from memsense_gui.workers.bridge import EngineBridge
from memsense_gui.workers.runner import TaskRunner

EngineFactory = Callable[[str], RecallEngine]


def default_engine_factory(location: str) -> RecallEngine:
    """The real engine (core), imported on first use: the app starts before torch loads."""
    from core.recall.engine import Engine

    return Engine(location)


def default_store_builder(*args: Any, **kwargs: Any) -> Any:
    from core.recall.engine import build_store

    return build_store(*args, **kwargs)


class AppContext(QObject):
    """Store, engine, settings, the current config, presets, judgments, session, runners and the app's events."""

    store_opened = Signal(str)  # location
    store_failed = Signal(str)  # location that did not open (the store open before stays open)
    users_loaded = Signal(list)
    chunks_loaded = Signal(str)  # user id
    model_loaded = Signal()
    store_built = Signal(str)  # location
    recall_started = Signal(str)  # query
    recall_finished = Signal(object)  # RecallPool
    ranking_updated = Signal(object)  # Ranking, after every panel was updated
    run_exported = Signal(str)  # path of a TREC run written
    run_recorded = Signal(int)  # id of a run the app kept in the store's history
    error_raised = Signal(object, str)  # exception, context: the window shows it
    error_reported = Signal(str)  # the message shown
    closing = Signal()  # the window is closing: stop background work

    def __init__(self, home: Path, settings: QSettings | None = None, *,
                 engine_factory: EngineFactory | None = None, store_builder: Callable[..., Any] | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.home = Path(home)
        self.settings = settings or paths.settings(self.home)
        self.engine_factory = engine_factory or default_engine_factory
        self.store_builder = store_builder or default_store_builder
        self.engine: RecallEngine | None = None  # used on the engine runner's thread only
        self.location: str | None = None
        self.users: list[str] = []
        self.model_ready = False
        self.engine_runner = TaskRunner("memsense-engine", self)
        # the embedding model loads here while the engine thread opens the store and reads the
        # user; the engine's embedder is the only thing both touch, and its load is locked
        self.model_runner = TaskRunner("memsense-model", self)
        self.ingest_runner = TaskRunner("memsense-ingest", self)
        self.current = CurrentSettings(parent=self)  # the settings on screen: every change goes through it
        self.session = QuerySession(self.current, parent=self)
        self.judgments = AppJudgments(self)
        self.presets = PresetLibrary(self._preset_store(), self)
        self.question_sets = QuestionSets(self.settings, self)
        self._workspace: tuple[RecallEngine, Workspace] | None = None
        self._workspace_lock = threading.Lock()
        self._engines = 0  # engines seen: a reopened store or another model is another engine
        self.store_opened.connect(lambda _location: self.question_sets.follow_store(self.open_workspace()))
        self.evaluation = EvaluationSource(self, self)
        """The window's one question set: every view and action evaluates it, on the store's workspace."""
        self.shared_runs = SharedRuns(self.settings)  # a team's runs database (Settings > Shared runs…)
        self.runs = RunHistory(self.run_source, self, self.shared_runs)  # evaluation, tune, diagnose, fix runs of the open store
        self.closing.connect(self.runs.shutdown)
        self.run_recorded.connect(self.runs.recorded)  # diagnose and fix keep theirs on their own runner: History hears of them too
        self.presets.presets_changed.connect(self._plan_recall)
        self.current.changed.connect(self._plan_recall)
        self._plan_recall()

    def _plan_recall(self, *_: Any) -> None:
        """The question set's recall depth follows the presets and the settings."""
        self.question_sets.plan_for(self.presets.all().values(), self.current.config)
        if self._workspace is not None:
            self._workspace[1].plan = self.question_sets.plan

    def open_workspace(self) -> Workspace:
        """Any thread: the open store's workspace (`core.evaluation.workspace`): its question sets, their one
        recall (each recall run on the engine thread) and its run history. One per engine: a store opened
        again, or with another model, starts afresh."""
        with self._workspace_lock:
            engine = self.engine
            if engine is None:
                raise MemsenseError("open a store first (File > Open store…)")
            if self._workspace is None or self._workspace[0] is not engine:
                self._engines += 1
                self._workspace = engine, self._new_workspace(engine, self.location or "")
            return self._workspace[1]

    def _new_workspace(self, engine: RecallEngine, location: str) -> Workspace:
        bridge = EngineBridge(self.engine_runner)

        def recall(user_id: str, text: str, depth: int, cancel: threading.Event | None = None) -> RecallPool:
            return bridge.call(engine.recall, user_id, text, depth, cancel=cancel)

        return Workspace(location, recall, self.users, source=f"{location} (engine {self._engines} of this app)",
                         model_hint=lambda: self.run_source()[1], plan=self.question_sets.plan,
                         shared_runs=self._shared_runs, on_kept=self.runs.own)

    def _shared_runs(self) -> tuple[str, str | None] | None:
        """Where runs are kept when the team shares them (Settings > Shared runs…): (URL, who), else None."""
        url = self.shared_runs.url() if self.shared_runs.address else None
        return (url, self.shared_runs.made_by()) if url else None

    def run_source(self) -> tuple[str | None, str]:
        """The open store and its model's name, for the run history."""
        engine = self.engine
        model = (engine.model_text or engine.model_path or "") if engine is not None else ""
        return self.location, str(model)

    def _preset_store(self) -> PresetStore:
        path = paths.presets_file(self.home)
        try:
            return PresetStore(path)
        except MemsenseError as exc:
            QTimer.singleShot(0, lambda error=exc: self.report_error(error, "Your presets"))
            return PresetStore(path.with_name("presets.recovered.json"))

    def report_error(self, exc: BaseException, context: str = "") -> None:
        """Every error ends here: the window shows a dialog that says what to do."""
        self.error_raised.emit(exc, context)

    def attempt(self, fn: Callable[[], Any], context: str) -> bool:
        """Run `fn`; a failure is reported (a dialog) and gives False."""
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a dialog
            self.report_error(exc, context)
            return False
        return True

    def open_judgments(self, location: str) -> None:
        """The judged set of the store at `location` (a bad file is reported and kept as it is)."""
        try:
            self.judgments.open(paths.judged_file(self.home, location))
        except MemsenseError as exc:
            self.report_error(exc, f"Your judged questions (kept as they are; new grades go to {self.judgments.path})")

    def current_grades(self) -> dict[str, int]:
        """Memory id -> grade marked for the query on screen."""
        pool = self.session.pool
        return self.judgments.grades(pool.user_id, pool.query) if pool is not None else {}
