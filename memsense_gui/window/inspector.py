"""The inspector: every panel on the same ranking and the same focused chunk.

Each new ranking (a recall, or a slider tick re-ranking the cached pool) reaches the results
table and bars at once, and every other panel now if it is on screen, else when its dock is
shown: hidden panels cost nothing while a slider moves. Selecting a chunk anywhere focuses
it everywhere.
"""
from __future__ import annotations

from typing import Callable, Iterable

from PySide6.QtWidgets import QTableView

from core.errors import MemsenseError
from core.rank.ranking import Ranking
from core.records import Chunk
from memsense_gui import theme
from memsense_gui.state.context import AppContext
from memsense_gui.views.dock import DockId
from memsense_gui.views.explain import explain
from memsense_gui.views.tables import select_id
from memsense_gui.window.parts import InspectorUi


def _quietly_select(view: QTableView, memory_id: str) -> None:
    view.selectionModel().blockSignals(True)
    select_id(view, memory_id)
    view.selectionModel().blockSignals(False)


class Inspector:
    """Ranking -> panels, and the focused chunk -> chunk, explain and turn-support panels."""

    FOCUS_PANELS = (DockId.CHUNK, DockId.EXPLAIN, DockId.TURN_SUPPORT)

    def __init__(self, ctx: AppContext, window: InspectorUi):
        self.window = window
        self.ctx = ctx
        self.focused_id: str | None = None
        self.user_chunks: dict[str, Chunk] = {}  # the user's chunks, for chunks outside the pool
        self._stale: set[DockId] = set()
        self._chunk_key: tuple = ()
        w = window
        self._updaters: dict[DockId, Callable[[Ranking | None], None]] = {
            DockId.ROUTE_RANKS: lambda r: w.matrix_panel.set_ranking(r, self.ctx.session.gold, self.ctx.session.pins),
            DockId.CANDIDATE_POOL: self._update_pool,
            DockId.MMR_TRACE: w.mmr_panel.set_ranking,
            DockId.WHY_NOT: lambda r: w.whynot_panel.set_ranking(r, self.ctx.session.pins),
            DockId.COMPARE: lambda r: w.comparisons.update(),
        }

    def connect(self) -> None:
        session = self.ctx.session
        session.ranking_changed.connect(self.show_ranking)
        session.updating.connect(self.window.results.set_updating)
        why_not = self.window.whynot_panel
        for model in (self.window.pool_panel.model, why_not.pins_model, why_not.search_model):
            model.fate_of = session.fate  # "why not" never ranks the deepest lists on this thread
        session.pool_changed.connect(self._pool_changed)
        session.pins_changed.connect(lambda _pins: self._refresh_pins())
        for which in (*self.FOCUS_PANELS, *self._updaters):
            dock = self.window.dock(which)
            if dock is not None:
                dock.visibilityChanged.connect(lambda on, t=which: self._dock_shown(t, on))

    def _pool_changed(self, pool: object) -> None:
        if pool is None:  # the store closed: every panel empties, the focused chunk too
            self.focused_id, self.user_chunks, self._chunk_key = None, {}, ()
            w = self.window
            w.chunk_panel.show_chunk(None)
            w.explain_panel.show_record(None)
            w.turns_panel.show_row(None, None)
            w.matrix_panel.set_focus(None)
            self.show_ranking(None)

    # ---- ranking -> panels ------------------------------------------------------------------------
    def show_ranking(self, ranking: Ranking | None) -> None:
        """Results and bars at once; every other panel now if it is on screen, else when shown."""
        s, w = self.ctx.session, self.window
        previous = s.baseline.result_ids if s.baseline is not None else None
        w.results.model.set_grades(self.ctx.current_grades())
        w.results.set_ranking(ranking, previous, s.gold, s.pins, ranking.pool.query if ranking else "",
                              dropped=s.pinned_baseline is not None)
        for which in self._updaters:
            self.update_panel(which)
        self._show_focus(self.focused_id)
        if ranking is not None:
            self._explain_empty(ranking)
            self.ctx.ranking_updated.emit(ranking)

    def _explain_empty(self, ranking: Ranking) -> None:
        """No results because every route weight is 0: say so, not just an empty table."""
        if ranking.selection.order:
            return
        try:
            self.ctx.current.config.check_searchable()
        except MemsenseError as exc:
            self.window.statusBar().showMessage(str(exc).capitalize(), 15000)

    def showing(self, which: DockId) -> bool:
        """On screen: not closed and not a tab behind another dock."""
        return self.window.showing(which)

    def update_panel(self, which: DockId, force: bool = False) -> None:
        if not (force or self.showing(which)):
            self._stale.add(which)
            return
        self._stale.discard(which)
        self._updaters[which](self.ctx.session.ranking)

    def _update_pool(self, ranking: Ranking | None) -> None:
        s, panel = self.ctx.session, self.window.pool_panel
        panel.model.set_grades(self.ctx.current_grades())
        panel.set_ranking(ranking, s.gold, s.pins)
        if self.focused_id:
            _quietly_select(panel.view, self.focused_id)

    def _dock_shown(self, which: DockId, visible: bool) -> None:
        if not visible or which not in self._stale:
            return
        if which in self._updaters:
            self.update_panel(which, force=True)
        else:
            self._show_focus(self.focused_id)

    def _refresh_pins(self) -> None:
        if self.ctx.session.ranking is not None:
            self.show_ranking(self.ctx.session.ranking)
        else:
            self.window.whynot_panel.set_ranking(None, self.ctx.session.pins)

    def theme_changed(self) -> None:
        self._chunk_key = ()
        if self.focused_id:
            self._show_focus(self.focused_id)

    # ---- the focused chunk --------------------------------------------------------------------------
    def clear_focus(self) -> None:
        """A new answer: no chunk is focused until one is selected."""
        self.focused_id = None

    def set_user_chunks(self, chunks: Iterable[Chunk]) -> None:
        """The user's chunks (listed after an answer), for chunks outside the pool; () on a new user."""
        self.user_chunks = {c.memory_id: c for c in chunks}

    def focus_chunk(self, memory_id: str) -> None:
        """Show one chunk in the chunk, explain and turn-support panels; select it everywhere."""
        self.focused_id = memory_id
        self.window.matrix_panel.set_focus(memory_id)
        for view in (self.window.results.view, self.window.pool_panel.view):
            _quietly_select(view, memory_id)
            view.viewport().update()
        self._show_focus(memory_id)

    def _show_focus(self, memory_id: str | None, force: bool = False) -> None:
        """Chunk, explain and turn-support panels follow the focused chunk; hidden ones (tabbed
        away) are brought up to date when they are shown, which keeps slider ticks cheap."""
        ranking = self.ctx.session.ranking
        if memory_id is None:
            return
        for which, show in zip(self.FOCUS_PANELS, (self._show_chunk, self._show_explain, self._show_turns)):
            if force or self.showing(which):
                show(ranking, memory_id)
                self._stale.discard(which)
            else:
                self._stale.add(which)

    def _show_chunk(self, ranking: Ranking | None, memory_id: str) -> None:
        chunk = self.chunk(memory_id)
        neighbors: tuple[str | None, str | None] = (None, None)
        fate = ""
        if ranking is not None and chunk is not None:
            neighbors = ranking.pool.neighbors.get(memory_id, (None, None))
            f = self.ctx.session.fate(ranking, memory_id)
            fate = f"{f.status}: {f.reason}"
        evidence = self.ctx.session.evidence
        key = (memory_id, fate, theme.current().dark, evidence)
        if key != self._chunk_key:  # re-render only when something shown changed
            self._chunk_key = key
            self.window.chunk_panel.show_chunk(chunk, neighbors, fate, evidence)

    def _show_explain(self, ranking: Ranking | None, memory_id: str) -> None:
        if ranking is None:
            self.window.explain_panel.show_record(None)
            return
        self.window.explain_panel.show_record(*explain(ranking, memory_id, self.ctx.session.fate))

    def _show_turns(self, ranking: Ranking | None, memory_id: str) -> None:
        self.window.turns_panel.show_row(ranking, memory_id)

    def chunk(self, memory_id: str) -> Chunk | None:
        """The chunk from the pool, its fetched neighbors, or the user's chunks."""
        pool = self.ctx.session.pool
        if pool is not None:
            i = pool.index_of(memory_id)
            if i is not None:
                return pool.chunks[i]
            if memory_id in pool.user_chunks:
                return pool.user_chunks[memory_id]
        return self.user_chunks.get(memory_id)
