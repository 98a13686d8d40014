"""Query actions: pick a user, ask, open a question from elsewhere, pin a chunk.

Recall runs on the engine thread and the newest query wins: a recall that a newer one
replaced is dropped when it returns. The pool then goes to the query session, which
re-ranks it under the current settings (and again on every slider tick).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from PySide6.QtCore import QTimer

from core.errors import MemsenseError
from core.recall.query_text import MAX_QUERY_CHARS
from core.records import Chunk
from memsense_gui.state.context import AppContext
from memsense_gui.views.dock import DockId
from memsense_gui.views.tables import selected_id
from memsense_gui.window.parts import QueryUi
from memsense_gui.workers import jobs
from memsense_gui.workers.runner import Task
from memsense_gui.workers.slot import TaskSlot

LIST_CHUNKS_AFTER_MS = 150
"""After an answer, the user's chunks are listed this much later, once the answer is painted."""


def recall_timing(elapsed_ms: float, steps: Mapping[str, float]) -> str:
    """" in 7.3 ms (embed 5.2, dense 0.4, …)": the whole recall first, as a status line 1280
    pixels wide shows it, then the engine's steps; tenths below 10 ms, where most steps are
    (none reads "0 ms")."""
    def ms(value: float) -> str:
        return f"{value:.1f}" if value < 10 else f"{value:.0f}"

    parts = ", ".join(f"{name.replace('_', ' ')} {ms(value)}" for name, value in steps.items())
    return f" in {ms(elapsed_ms)} ms" + (f" ({parts})" if parts else "")


class QueryActions:
    """The toolbar (user, query, Search) and Query menu: recall, then hand the pool on."""

    def __init__(self, ctx: AppContext, window: QueryUi):
        self.window = window
        self.ctx = ctx
        self.user_id: str | None = None
        self._chunks_wanted: str | None = None
        self.recall_slot = TaskSlot(self.ctx.engine_runner, succeeded=self._recalled, failed=self._recall_failed)

    def _status(self, text: str, ms: int = 0) -> None:
        self.window.statusBar().showMessage(text, ms)

    # ---- users ------------------------------------------------------------------------------------
    def show_users(self, users: Sequence[str], preferred: str = "") -> None:
        """Fill the user picker (the preferred user selected when present) without re-running."""
        combo = self.window.user_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(list(users))
        combo.setCurrentText(preferred if preferred in users else users[0])
        combo.blockSignals(False)
        self.user_picked(combo.currentText(), rerun=False)

    def user_picked(self, user_id: str, rerun: bool = True) -> None:
        if not user_id or self.ctx.engine is None:
            return
        self.user_id = user_id
        self.ctx.settings.setValue("query/user", user_id)
        self.ctx.session.show_user(user_id)
        self.window.inspector.set_user_chunks(())
        self.window.whynot_panel.set_chunks(())
        self._chunks_wanted = user_id  # listed once a query this call or its caller runs is answered
        QTimer.singleShot(0, self._list_chunks)
        if rerun and self.window.query_edit.text().strip():
            self.run_query()

    def _list_chunks(self) -> None:
        """List the user's chunks (for Why not? and the inspector) on the engine thread, but not
        while a query waits for its answer: decoding a big user's chunks holds up the recall,
        and Python work on another thread slows every Qt call into Python while it runs."""
        if self._chunks_wanted is None or self.recall_slot.running:
            return  # `_recalled` lists them once the answer is on screen
        user_id, self._chunks_wanted = self._chunks_wanted, None
        if user_id != self.user_id or self.ctx.engine is None:
            return
        self.ctx.engine_runner.submit("chunks", jobs.user_chunks, self.ctx.engine, user_id,
                                      succeeded=self._chunks_ready,
                                      failed=lambda e: self.ctx.report_error(e, "Listing chunks"))

    def _chunks_ready(self, result: tuple[str, tuple[Chunk, ...]]) -> None:
        user_id, chunks = result
        if user_id != self.user_id:
            return  # another user was picked meanwhile
        self.window.inspector.set_user_chunks(chunks)
        self.window.whynot_panel.set_chunks(chunks)
        self.ctx.chunks_loaded.emit(user_id)

    # ---- query ------------------------------------------------------------------------------------
    def focus_query(self) -> None:
        self.window.query_edit.setFocus()
        self.window.query_edit.selectAll()

    def query_edited(self, text: str) -> None:
        """Say so when the query box is full: what was typed or pasted beyond it is not there."""
        if len(text) >= MAX_QUERY_CHARS:
            self._status(f"The query box holds at most {MAX_QUERY_CHARS:,} characters: the rest of what was "
                         "typed or pasted is not in it (the model reads only the first 256 tokens)", 15000)

    def run_query(self, gold: Iterable[str] = (), *, evidence: Iterable[str] | None = None) -> Task | None:
        """Recall on the engine thread; the newest request wins (older results are dropped).
        `evidence`: the judged question's evidence turns; None looks the query up among the
        loaded cases (a typed judged question gets its evidence too)."""
        query = self.window.query_edit.text().strip()
        if self.ctx.engine is None:
            self._status("Open a store first (File > Open store…)", 5000)
            return None
        if not query or not self.user_id:
            self._status("Type a query first", 3000)
            return None
        if evidence is None:
            evidence = self.window.cases.evidence_for(self.user_id, query)
        request = jobs.RecallRequest(self.user_id, query, frozenset(gold), frozenset(evidence),
                                     self.ctx.current.config.route_limit)
        waiting = "" if self.ctx.model_ready else " (waiting for the model to load)"
        self._status(f"Searching “{query}”{waiting}…")
        self.ctx.settings.setValue("query/text", query)
        self.ctx.recall_started.emit(query)
        return self.recall_slot.start("recall", jobs.recall, self.ctx.engine, request)

    def _recalled(self, result: jobs.RecallResult) -> None:
        pool = result.pool
        self.window.inspector.clear_focus()
        self.ctx.session.set_pool(pool, result.request.gold, result.request.evidence)
        if result.note:
            self._status(result.note[0].upper() + result.note[1:], 15000)
        else:
            self._status(f"Recalled {pool.size} chunks{recall_timing(result.elapsed_ms, pool.timings_ms)}", 6000)
        self.ctx.recall_finished.emit(pool)
        self.window.results.select_position(0)
        QTimer.singleShot(LIST_CHUNKS_AFTER_MS, self._list_chunks)

    def _recall_failed(self, exc: BaseException) -> None:
        QTimer.singleShot(0, self._list_chunks)
        self.window.statusBar().clearMessage()
        self.ctx.report_error(exc, "Searching")

    def open_question(self, user_id: str, query: str, gold_session_ids: Iterable[str] = (),
                      evidence: Iterable[str] | None = None) -> Task | None:
        """Run `query` for `user_id` and mark the gold sessions (ids or numbers) everywhere and
        the evidence turns (None: those of the loaded case with this text) in the Chunk panel."""
        if user_id not in self.ctx.users:
            self.ctx.report_error(MemsenseError(f"user {user_id!r} is not in this store; open the store that holds it"))
            return None
        combo = self.window.user_combo
        if combo.currentText() != user_id:
            combo.blockSignals(True)
            combo.setCurrentText(user_id)
            combo.blockSignals(False)
            self.user_picked(user_id, rerun=False)
        self.window.query_edit.setText(query)
        return self.run_query(gold=frozenset(str(g) for g in gold_session_ids), evidence=evidence)

    # ---- why not ------------------------------------------------------------------------------------
    def focus_why_not(self) -> None:
        self.window.raise_dock(DockId.WHY_NOT)
        search = self.window.whynot_panel.search
        search.setFocus()
        search.selectAll()

    def pin_focused(self) -> None:
        panel = self.window.whynot_panel
        mid = selected_id(panel.search_view) if panel.search_view.hasFocus() else None
        mid = mid or self.window.inspector.focused_id
        if mid:
            self.ctx.session.pin(mid)
            self._status(f"Pinned {mid}: see its fate in Why not?", 4000)
