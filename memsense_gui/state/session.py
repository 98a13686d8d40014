"""The current query: its recall pool, and its re-ranking under the current settings.

Recall once, re-rank many: a change of the settings re-ranks the cached pool (about a
millisecond) with no new search. The settings are not the session's: it reads and follows
`current_settings.CurrentSettings` (whose `changed` is throttled: at most one re-rank per
interval, the newest settings win). `QuerySession` joins two parts, each testable alone:
- `movement.Movement`: what rank movement is shown against (a pinned baseline, ranked once per
  new pool, else the settings before the last gesture) and the pinned chunks;
- `pools.PoolHolder`: the pool and the deepest pool ranked from it so far.

A pool is recalled as deep as the settings need. A re-rank never deepens it: a knob that needs
deeper route lists (top_k up, say), a pinned baseline or a compared preset that does, waits
while the holder deepens the pool as a job on its task runner, as deep as top_k's slider can
then ask of any of them without another wait (`deep_enough`; `pool_deepened` follows).
Meanwhile the ranking on screen stays, marked as updating (`updating`), and a pinned baseline
not yet ranked on the pool measures no movement; then the newest settings apply. A re-rank that
may read `HEAVY_RERANK_ROWS` candidates runs on the runner too, the ranking on screen updating
meanwhile; the settings newest when it is done are the next ones ranked.
"Why not" on a chunk no route found within route_limit reads the query's deepest lists
(`fate`): until they are ranked, its fate says it is updating.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from PySide6.QtCore import QObject, Signal

from core.config import TOP_K_MAX, Config
from core.rank.explain import Fate, reads_deepest
from core.rank.ranking import Ranking
from core.rank.rerank import rerank
from core.recall.pool import RecallPool
from memsense_gui.state.current_settings import CurrentSettings
from memsense_gui.state.movement import Baseline, Movement
from memsense_gui.state.pools import PoolHolder
from memsense_gui.workers.runner import TaskRunner

__all__ = ["UPDATING", "Baseline", "QuerySession"]

UPDATING = "updating"
"""The status of a fate that waits for the query's deepest route lists (`QuerySession.fate`)."""
HEAVY_RERANK_ROWS = 1000
"""A re-rank under settings that may read this many candidates runs on the runner, the ranking
on screen marked as updating meanwhile: 2,000 candidates take 40-130 ms on a 30,000-chunk user,
a freeze on every slider tick on the UI thread. Memsense's defaults read 32."""


class QuerySession(QObject):
    """Pool + the current settings -> ranking, with a baseline ranking kept for rank movement."""

    pool_changed = Signal(object)  # RecallPool | None
    ranking_changed = Signal(object)  # Ranking
    pins_changed = Signal(object)  # tuple[str, ...]
    baseline_changed = Signal(object)  # Baseline | None
    rerank_failed = Signal(object)  # exception
    deepening = Signal(bool)  # True while the pool's deeper lists are ranked on the runner
    pool_deepened = Signal(object)  # RecallPool: the current pool is deeper; ask `deep_enough` again
    updating = Signal(bool)  # True while the ranking or pinned baseline on screen waits: a deeper pool, a long re-rank

    def __init__(self, settings: CurrentSettings, parent: QObject | None = None, runner: TaskRunner | None = None):
        super().__init__(parent)
        self.settings = settings
        self.ranking: Ranking | None = None
        self.gold: frozenset[str] = frozenset()
        self.evidence: frozenset[str] = frozenset()
        self.is_updating = False
        self.movement = Movement(self)
        self.movement.pins_changed.connect(self.pins_changed)
        self.movement.baseline_changed.connect(self.baseline_changed)
        self.pools = PoolHolder(runner, self)
        self.pools.deepening.connect(self.deepening)
        self.pools.deepened.connect(self._on_deepened)
        self.pools.failed.connect(self._on_deepening_failed)
        self.pools.ranked_ready.connect(self._on_ranked)
        settings.changed.connect(self._settings_changed)
        settings.gesture_ended.connect(self.movement.end_gesture)

    # ---- what the parts hold ----------------------------------------------------------------
    @property
    def pool(self) -> RecallPool | None:
        """The current query's pool, as recalled."""
        return self.pools.pool

    @property
    def baseline(self) -> Ranking | None:
        """What movement is shown against (None: no movement to show)."""
        return self.movement.baseline

    @property
    def pinned_baseline(self) -> Baseline | None:
        return self.movement.pinned

    @property
    def pins(self) -> tuple[str, ...]:
        return self.movement.pins

    @property
    def is_deepening(self) -> bool:
        return self.pools.is_deepening

    # ---- pool -----------------------------------------------------------------------------
    def set_pool(self, pool: RecallPool | None, gold: Iterable[str] = (), evidence: Iterable[str] = ()) -> None:
        """A new recall: no movement to show yet. `gold`: session ids judged relevant;
        `evidence`: the judged question's evidence turn ids (e.g. "D2:5")."""
        self.pools.set(pool)
        self.gold = frozenset(gold)
        self.evidence = frozenset(evidence)
        self.ranking = None
        self.movement.new_pool()
        self._set_updating(False)
        self.pool_changed.emit(pool)
        if pool is not None:
            self._rerank()

    # ---- settings ---------------------------------------------------------------------------
    def _settings_changed(self, cfg: Config, cause: str) -> None:
        """The settings changed (`cause`: the knob, or "undo", "apply"...): a new gesture starts a
        new movement baseline; the pool is re-ranked."""
        self.movement.config_changed(cause or None, self.ranking)
        if self.pool is not None:
            self._rerank()

    def rerank(self, cfg: Config) -> Ranking:
        """The current pool re-ranked under `cfg` (`deep_enough(cfg)` first, else `PoolTooShallow`):
        when the deepening `cfg` waited for re-ranked it on the runner already, that ranking."""
        assert self.pool is not None
        if not self.pools.ready(cfg.route_limit):
            return rerank(self.pool, cfg)
        return self.pools.ranked(cfg) or rerank(self.pools.pool_for(cfg.route_limit), cfg)

    def _rerank(self) -> None:
        """Re-rank under the settings, and rank the pinned baseline if it is due, each once the
        pool is deep enough for it; one deepening serves both, started after what is ready now
        is on screen. Meanwhile what is on screen stays, marked as updating, and a baseline not
        yet ranked shows no movement."""
        due = self.movement.due_config()
        if due is not None and self.pools.ready(due.route_limit):
            self.movement.ranked(self._ranked(due))
            due = None
        cfg = self.settings.config
        waits = False
        if self.pools.ready(cfg.route_limit):
            if self.pools.has_ranked(cfg) or not self._heavy(cfg):
                ranking = self._ranked(cfg)
                if ranking is not None:
                    self.settings.applied()
                    self.ranking = ranking
                    self.ranking_changed.emit(ranking)
            else:  # too long for this thread: on the runner, and here again when it is done
                self.pools.rank(cfg)
                waits = True
        self._set_updating(not self.deep_enough(cfg, *(() if due is None else (due,))) or waits)

    def _on_ranked(self, cfg: Config) -> None:
        """A re-rank made on the runner is done: shown at once even if the settings moved on
        meanwhile (a drag stays live, marked as updating), then the newest settings are ranked."""
        if cfg != self.settings.config:
            ranking = self._ranked(cfg)
            if ranking is not None:
                self.ranking = ranking
                self.ranking_changed.emit(ranking)
        self._rerank()

    def _heavy(self, cfg: Config) -> bool:
        """Whether re-ranking the pool under `cfg` may read `HEAVY_RERANK_ROWS` candidates or more."""
        return min(cfg.candidate_limit, self.pools.pool_for(cfg.route_limit).size) >= HEAVY_RERANK_ROWS

    def _ranked(self, cfg: Config) -> Ranking | None:
        try:
            return self.rerank(cfg)
        except Exception as exc:  # noqa: BLE001 - a bad scheme or pool is reported, not fatal
            self.rerank_failed.emit(exc)
            return None

    def _set_updating(self, on: bool) -> None:
        if on != self.is_updating:
            self.is_updating = on
            self.updating.emit(on)

    # ---- baseline ---------------------------------------------------------------------------
    def pin_baseline(self, label: str, cfg: Config) -> None:
        """Show movement against `cfg` (a preset, a snapshot) until unpinned, for every query."""
        self.movement.pin_baseline(label, cfg, self.pool is not None)
        self._baseline_moved()

    def unpin_baseline(self) -> None:
        """Back to movement against the settings before the last gesture (none until then)."""
        self.movement.unpin_baseline()
        self._baseline_moved()

    def _baseline_moved(self) -> None:
        """A pinned baseline is ranked on the pool (once deep enough for it: no movement shown
        until then); none pinned: no movement until the next gesture."""
        if self.pool is None:
            return
        shown = self.ranking
        self._rerank()
        if shown is not None and self.ranking is shown:  # it waits for a deeper pool too: no old movement
            self.ranking_changed.emit(shown)

    # ---- deepening ----------------------------------------------------------------------------
    def deep_enough(self, *configs: Config) -> bool:
        """Whether re-ranking the pool under each of `configs` is quick (no route list to rank
        deeper than before). If not, the pool deepens on the runner, as deep as top_k's slider
        can ask of any of them (and re-ranks it there under each), and `pool_deepened` follows: ask again then."""
        if self.pool is None or all(self.pools.ready(cfg.route_limit) for cfg in configs):
            return True
        self.pools.deepen(max(max(cfg.route_limit, replace(cfg, top_k=TOP_K_MAX).route_limit) for cfg in configs), configs)
        return False

    def fate(self, ranking: Ranking, memory_id: str) -> Fate:
        """`ranking.fate(memory_id)` ("why not"), given the query's deepest pool when it must read
        it (no counted route found the chunk within route_limit); when those lists are not ranked
        yet, they are, on the runner, and the fate says it is updating; a new ranking of the
        deeper pool follows (`ranking_changed`)."""
        pool = self.pool
        if pool is None or not self._of_this_query(ranking) or not reads_deepest(ranking, memory_id):
            return ranking.fate(memory_id)  # another query's ranking reads its own pool
        if self.pools.deepest_ready:
            return ranking.fate(memory_id, self.pools.pool_for(pool.max_depth))
        self.pools.deepen(pool.max_depth)
        return Fate(memory_id, UPDATING, "ranking the query's deepest route lists to say why (a moment)")

    def _of_this_query(self, ranking: Ranking) -> bool:
        pool = self.pool
        return pool is not None and (ranking.pool is pool or ranking.pool is self.pools.deep
                                     or (pool.source is not None and ranking.pool.source is pool.source))

    def _on_deepened(self, pool: RecallPool) -> None:
        self._rerank()
        self.pool_deepened.emit(pool)

    def _on_deepening_failed(self, error: BaseException) -> None:
        self._set_updating(False)
        self.rerank_failed.emit(error)

    # ---- movement and pins ----------------------------------------------------------------
    def previous_rank(self, memory_id: str) -> int | None:
        """1-based rank under the baseline (None: no baseline or not returned)."""
        return self.movement.previous_rank(memory_id)

    def pin(self, memory_id: str) -> None:
        self.movement.pin(memory_id)

    def unpin(self, memory_id: str) -> None:
        self.movement.unpin(memory_id)

    def show_user(self, user_id: str) -> None:
        self.movement.show_user(user_id)

    def clear_pins(self) -> None:
        self.movement.clear_pins()
