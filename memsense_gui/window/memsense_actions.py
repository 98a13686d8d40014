"""File > Connect to Memsense…: open a live Memsense database (read-only) as the store, and,
given its service's URL, show production's results beside the reproduction for every query.

The service is asked once per (user, query, top_k) on the engine thread; moving a slider only
re-compares the new reproduction with the answer already fetched, so the view shows what the
tuned settings would change in production.
"""
from __future__ import annotations

from functools import partial
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from core.recall.memsense.service import compare, service_search
from memsense_gui.state.context import AppContext
from core.redact import is_secret_name, redact, redact_url, split_password
from memsense_gui.views.connect import ConnectDialog, MemsenseConnection
from memsense_gui.views.dock import DockId
from memsense_gui.views.production import ProductionPanel
from memsense_gui.window.layout_notes import CONNECTED_STEP
from memsense_gui.window.layouts import Layout
from memsense_gui.window.parts import MemsenseUi
from memsense_gui.workers.runner import Task

SETTINGS_KEY = "memsense/connection"
NOT_CONNECTED = "Not connected to a Memsense service (File > Connect to Memsense…)."


def open_memsense(conn: MemsenseConnection, location: str) -> Any:
    """The engine over a live Memsense database (on the engine thread)."""
    from core.recall.memsense.engine import PostgresEngine

    return PostgresEngine(conn.database, tenant=conn.tenant, scope=conn.scope, embedder=conn.embedder)


def fetch_production(conn: MemsenseConnection, user: str, query: str, top_k: int, task: Task | None = None) -> list:
    """What the service answers for one search (on the engine thread: it is network I/O)."""
    return service_search(conn.service, tenant=conn.tenant, scope=conn.scope, user=user, query=query, top_k=top_k)


def without_password(dsn: str) -> str:
    """The address to remember in the settings: no password (asked again), no secret parameter."""
    parts = urlsplit(split_password(dsn)[0])
    if not parts.scheme or not parts.netloc:
        return dsn
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not is_secret_name(k)])
    return urlunsplit(parts._replace(query=query))


class MemsenseActions:
    """The connection, the Production view and the service's answers (cached per search)."""

    def __init__(self, ctx: AppContext, window: MemsenseUi):
        self.window = window
        self.ctx = ctx
        self.connection: MemsenseConnection | None = None  # only once its database has opened
        self.location: str | None = None
        self._opening: tuple[MemsenseConnection, str] | None = None
        self.panel: ProductionPanel | None = None
        self._answers: dict[tuple[str, str, int], list | BaseException] = {}
        self._asked: set[tuple[str, str, int]] = set()
        self._ranking = None

    def connect(self) -> None:
        self.ctx.ranking_updated.connect(self._ranking_updated)
        self.ctx.store_opened.connect(self._store_opened)
        self.ctx.store_failed.connect(self._store_failed)
        self.ctx.model_loaded.connect(self._show_model)

    def _show_model(self) -> None:
        """A live database's queries need the model its vectors came from: name it."""
        engine = self.ctx.engine
        if self.connection is not None and engine is not None and engine.model_text is not None:
            self.window.model_label.setText(f"stored vectors: {engine.model_text}")

    def last_connection(self) -> MemsenseConnection | None:
        saved = self.ctx.settings.value(SETTINGS_KEY)
        if not isinstance(saved, dict) or "database" not in saved:
            return None
        return MemsenseConnection(**{k: str(saved.get(k, "")) for k in ("database", "tenant", "scope", "embedder",
                                                                        "service")})

    def ask_connect(self) -> ConnectDialog:
        """The dialog, window-modal; Connect opens the database."""
        dialog = ConnectDialog(self.last_connection(), self.window.window())
        dialog.accepted.connect(lambda: self.open(dialog.values()))
        dialog.open()
        return dialog

    def open(self, conn: MemsenseConnection) -> Task:
        """Open the database as the store; once it is open, the service (if any) is asked after
        each query. Until then, and if it fails, the connection open before (if any) stays."""
        self.ctx.settings.setValue(SETTINGS_KEY, {"database": without_password(conn.database), "tenant": conn.tenant,
                                                  "scope": conn.scope, "embedder": without_password(conn.embedder),
                                                  "service": without_password(conn.service)})
        location = f"Memsense {redact_url(conn.database)} ({conn.tenant}/{conn.scope})"
        self._opening = (conn, location)
        self._panel().show_message(f"Connecting to {redact_url(conn.database)}…")
        return self.window.stores.open_store(location, factory=lambda loc: open_memsense(conn, loc))

    def _panel(self) -> ProductionPanel:
        if self.panel is None:
            self.panel = ProductionPanel()
            self.panel.chunk_selected.connect(self.window.inspector.focus_chunk)
            self.window.add_view(DockId.PRODUCTION, self.panel)
        self.window.raise_dock(DockId.PRODUCTION)
        return self.panel

    def _store_opened(self, location: str) -> None:
        opening, self._opening = self._opening, None
        if opening is not None and opening[1] == location:
            self.connection, self.location = opening
            self._answers.clear()
            self._asked.clear()
            self._panel().show_message("Run a query: the service's results appear beside the reproduction."
                                       if self.connection.service else
                                       "No service URL given: only the reproduction is shown.")
            self.window.layout_notes.set_step(Layout.PRODUCTION, CONNECTED_STEP)
        elif location != self.location:
            self.connection, self.location = None, None
            self.window.layout_notes.set_step(Layout.PRODUCTION, None)
            if self.panel is not None:
                self.panel.show_message(NOT_CONNECTED)

    def _store_failed(self, location: str) -> None:
        if self._opening is None or self._opening[1] != location:
            return
        self._opening = None
        if self.panel is not None:
            self.panel.show_message(NOT_CONNECTED if self.connection is None else
                                    f"Still connected to {self.location}: the new database did not open.")

    def _ranking_updated(self, ranking) -> None:
        conn = self.connection
        if conn is None or not conn.service or self.panel is None or ranking is None:
            return
        self._ranking = ranking
        key = (ranking.pool.user_id, ranking.pool.query, ranking.config.top_k)
        if key in self._answers:
            self._show(key)
        elif key not in self._asked:
            self._asked.add(key)
            self.panel.show_message(f"Asking the service at {redact_url(conn.service)}…")
            self.ctx.engine_runner.submit("ask the service", fetch_production, conn, *key,
                                          succeeded=partial(self._answered, key), failed=partial(self._answered, key))

    def _answered(self, key: tuple[str, str, int], answer: list | BaseException) -> None:
        self._answers[key] = answer
        self._asked.discard(key)
        if isinstance(answer, BaseException):
            self.ctx.report_error(answer, "Asking the Memsense service")
        if self._ranking is not None and (self._ranking.pool.user_id, self._ranking.pool.query,
                                          self._ranking.config.top_k) == key:
            self._show(key)

    def _show(self, key: tuple[str, str, int]) -> None:
        answer, panel, ranking = self._answers[key], self.panel, self._ranking
        if panel is None or ranking is None:
            return
        if isinstance(answer, BaseException):
            panel.show_message(f"The service could not answer: {redact(answer)}")
            return
        preset = self.window.tuning.preset_combo.currentText() or "the current settings"
        settings = "Memsense's defaults" if ranking.config == type(ranking.config)() else \
            f"the current settings (preset {preset}, changed)"
        panel.show_comparison(compare(answer, ranking), key[0], settings)
