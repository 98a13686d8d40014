"""Store actions: open a store (folder or Qdrant server), load the model, build a new store.

Opening runs on the engine thread; then the users are listed, the store's judged set opens
and the embedding model loads on its own thread, while the engine thread reads the user's
chunks (a typed query waits for both, never for a torch import: see core.recall.embedding.embedder). Building runs on the ingest thread with a
progress dialog whose Cancel stops it at its next step.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QInputDialog

from core.errors import MemsenseError
from core.recall.protocol import RecallEngine
from memsense_gui.state import paths
from memsense_gui.state.context import AppContext, EngineFactory
from memsense_gui.views.dialogs import NewStoreDialog, ProgressDialog, ProgressOwner
from memsense_gui.views.file_dialogs import ask_folder
from memsense_gui.views.first_run import FirstRunDialog, model_prepared
from memsense_gui.workers import heap, jobs
from memsense_gui.workers.runner import Task
from memsense_gui.window.parts import StoreUi
from memsense_gui.workers.slot import TaskSlot


class StoreActions(ProgressOwner):
    """File > Open store…, Open Qdrant server…, New store…, Open the demo store; start and close."""

    def __init__(self, ctx: AppContext, window: StoreUi):
        self.window = window
        self.ctx = ctx
        self._autorun = self._first_minute = False
        self._fallback = False  # the store named on the command line is being opened
        self._building: tuple[Path, bool] = (Path(), False)  # location, open when built
        self.build_slot = TaskSlot(self.ctx.ingest_runner, succeeded=self._store_built, failed=self._build_failed,
                                   cancelled=self._build_cancelled)

    def _status(self, text: str, ms: int = 0) -> None:
        self.window.statusBar().showMessage(text, ms)

    # ---- open ------------------------------------------------------------------------------------
    def start(self, location: str = "") -> None:
        """What `main()` does after showing the window: open `location` (`memsense-gui STORE`),
        else reopen the last store, else the demo one."""
        last = str(self.ctx.settings.value("store/last", "") or "")
        self._autorun = True
        self._first_minute = not location and not self.ctx.settings.contains("store/last")  # a first start
        if location:
            self._fallback = True  # it fails: the last store (or the demo one) opens instead
            self.open_store(location)
        elif last and (last.startswith(("http://", "https://")) or Path(last).is_dir()):
            self.open_store(last)
        else:
            self.open_demo_store()

    def open_store(self, location: str | Path, factory: EngineFactory | None = None) -> Task:
        """Open a store on the engine thread; `store_opened` then the model loads in the background.
        `factory` opens other kinds of store (a live Memsense database); default: the context's.
        The store open now stays open and usable until the new one has opened: a store that
        fails to open leaves it whole (`_store_failed`)."""
        location = str(location)
        self._status(f"Opening {location}…")
        return self.ctx.engine_runner.submit("open store", jobs.open_store, factory or self.ctx.engine_factory, location,
                                             succeeded=self._store_ready,
                                             failed=lambda e: self._store_failed(e, location))

    def _store_ready(self, opened: jobs.OpenedStore) -> None:
        ctx, w = self.ctx, self.window
        self.close_engine()  # only now: the new store opened
        self._fallback = False
        ctx.engine, ctx.location, ctx.users = opened.engine, opened.location, list(opened.users)
        ctx.settings.setValue("store/last", opened.location)
        w.store_label.setText(f"store: {opened.location}")
        w.setWindowTitle(f"{Path(opened.location).name} — memsense")  # the desktop adds no second "memsense"
        self._status(f"Opened {opened.location}", 4000)
        ctx.open_judgments(opened.location)
        w.queries.show_users(ctx.users, str(ctx.settings.value("query/user", "")))
        ctx.store_opened.emit(opened.location)
        ctx.users_loaded.emit(ctx.users)
        self._load_model()
        if self._autorun and w.query_edit.text().strip():
            w.queries.run_query()
        elif self._first_minute and not w.query_edit.text().strip():
            w.picker.run_first()  # the demo's first question runs, its gold sessions starred
        self._autorun = self._first_minute = False

    def _store_failed(self, exc: BaseException, location: str) -> None:
        if self.ctx.location is None:
            self._status("No store open: File > Open store… or File > New store…")
        else:
            self._status(f"{self.ctx.location} stays open", 10_000)
        self.ctx.report_error(exc, f"Opening the store {location}")
        self.ctx.store_failed.emit(location)
        if self._fallback:
            self._fallback = False
            self.start()

    def _load_model(self) -> None:
        self.ctx.model_ready = False
        self.window.model_label.setText("model: loading…")
        engine = self.ctx.engine
        self.ctx.model_runner.submit("load model", jobs.load_model, engine,
                                      succeeded=lambda _r: self._model_ready(engine), failed=self._model_failed)

    def _model_ready(self, engine: RecallEngine | None) -> None:
        if engine is not self.ctx.engine:
            return  # another store was opened meanwhile
        self.ctx.model_ready = True
        heap.settle()  # the store's long-lived objects exist now: later collections skip them
        self.window.model_label.setText("model: ready")
        self.ctx.model_loaded.emit()

    def _model_failed(self, exc: BaseException) -> None:
        self.window.model_label.setText("model: not loaded")
        self.ctx.report_error(exc, "Loading the embedding model")

    def close_engine(self) -> None:
        ctx = self.ctx
        if ctx.engine is not None:
            ctx.engine_runner.submit("close store", jobs.close_engine, ctx.engine,
                                     failed=lambda e: ctx.report_error(e, "Closing the store"))
        ctx.engine, ctx.location, ctx.model_ready = None, None, False
        ctx.session.set_pool(None)
        ctx.session.clear_pins()  # memory ids of the store closed

    def ask_open_store(self) -> None:
        path = ask_folder(self.window.window(), self.ctx.settings, "store", "Open a memory store",
                          paths.stores_dir(self.ctx.home))
        if path:
            self.open_store(path)

    def ask_open_server(self) -> None:
        url, ok = QInputDialog.getText(self.window.window(), "Open Qdrant server", "Server URL:", text="http://localhost:6333")
        if ok and url.strip():
            self.open_store(url.strip())

    def open_demo_store(self) -> None:
        demo = paths.demo_store_dir(self.ctx.home)
        if demo.is_dir() and any(demo.iterdir()):
            self.open_store(demo)
        else:
            self.build_demo_store()

    # ---- build ------------------------------------------------------------------------------------
    def build_demo_store(self) -> Task | None:
        try:
            from core.recall.engine import DEMO_DATASET  # the engine module loads torch: only when asked
        except ImportError as exc:
            self.ctx.report_error(MemsenseError(f"the retrieval engine is not installed ({exc}); reinstall the project"))
            return None
        from core.machine import cache_dir

        store = paths.demo_store_dir(self.ctx.home)
        dialog = FirstRunDialog(store, cache_dir(), self.window.window())
        self.ctx.model_runner.submit("is the model prepared", model_prepared,
                                     succeeded=lambda ready: dialog.set_model_ready(ready) if self.progress is dialog else None)
        return self.build_store(Path(DEMO_DATASET), store, "hybrid", dialog=dialog)

    def ask_new_store(self) -> None:
        dialog = NewStoreDialog(paths.stores_dir(self.ctx.home), self.window.window())
        if dialog.exec():
            self.build_store(*dialog.values())

    def build_store(self, dataset: Path, location: Path, mode: str = "hybrid", *, title: str = "Building a store",
                    open_after: bool = True, dialog: ProgressDialog | None = None) -> Task:
        """Ingest on the ingest thread with a progress dialog (`dialog`, else a plain one titled
        `title`) and a working Cancel button."""
        self.progress = progress = dialog or ProgressDialog(title, self.window.window())
        progress.setLabelText(f"Reading {Path(dataset).name}…")
        self._building = (Path(location), open_after)
        task = self.build_slot.start("build store", jobs.build_store, self.ctx.store_builder, dataset, location, mode)
        task.progressed.connect(progress.report)
        progress.canceled.connect(task.cancel)
        progress.canceled.connect(lambda: progress.setLabelText("Cancelling…"))
        progress.show()
        return task

    def _store_built(self, _stats: Any) -> None:
        location, open_after = self._building
        self._close_progress()
        self._status(f"Built {location}", 5000)
        self.ctx.store_built.emit(str(location))
        if open_after:
            self.open_store(location)

    def _build_failed(self, exc: BaseException) -> None:
        self._close_progress()
        self.ctx.report_error(exc, f"Building the store {self._building[0]}")

    def _build_cancelled(self, _exc: BaseException) -> None:
        self._close_progress()
        self._status(f"Building {self._building[0]} was cancelled", 5000)

    def shut_down(self) -> None:
        """The window is closing: stop building, let the engine thread finish, close the store."""
        self._close_progress()
        ctx = self.ctx
        engine, ctx.engine = ctx.engine, None
        ctx.ingest_runner.shutdown(wait=True)  # cancels a build; it stops at its next step
        ctx.engine_runner.shutdown(wait=True)  # drops queued work, lets the running job finish
        ctx.model_runner.shutdown(wait=True)
        if engine is not None:
            try:
                engine.close()  # no other thread uses it any more
            except Exception:  # noqa: BLE001 - closing anyway; the lock is freed at exit
                pass
