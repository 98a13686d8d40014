"""The current query: its cached recall pool, the config and the re-ranking of one by the other.

Recall once, re-rank many: a new config re-ranks the cached pool (about a millisecond) with
no new search. Config requests from sliders are throttled, and the newest request wins: a
burst of slider ticks costs one re-rank per interval, and the last tick is always applied.

Rank movement is shown against a baseline ranking of the same pool: a pinned baseline (a
preset, or a snapshot of the settings at some moment) when there is one, re-ranked once per
new pool; else the settings before the last gesture.

A pool is recalled as deep as the settings need; a knob that needs deeper route lists (top_k
up, say), a pinned baseline or a compared preset that does, has the pool deepen itself from its
cached scores (`RecallPool.at_depth`). That ranks lists thousands deep on large users, so it
never runs on the UI thread: `deep_enough` says whether re-ranking under some configs is quick
and, when it is not, deepens the pool on one worker thread, as deep as top_k's slider can then
ask of any of them without another wait (shallower pools are cut from it); `pool_deepened`
follows. Meanwhile the ranking on screen stays, marked as updating (`updating`), and a pinned
baseline not yet ranked on the pool measures no movement; then the newest settings apply.
"Why not" on a chunk no route found within route_limit reads the query's deepest lists
(`fate`): until the worker has ranked them, its fate says it is updating.
"""
from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Iterable, NamedTuple

from PySide6.QtCore import QObject, QTimer, Signal

from core.config import TOP_K_MAX, Config
from core.rank.explain import Fate, reads_deepest
from core.rank.pool import RecallPool
from core.rank.ranking import Ranking
from core.rank.rerank import rerank

UPDATING = "updating"
"""The status of a fate that waits for the query's deepest route lists (`QuerySession.fate`)."""

GESTURE_SECONDS = 1.0
"""Changes of one knob closer together than this are one gesture: movement is shown
against the settings before the gesture started."""


class Baseline(NamedTuple):
    """Pinned settings that rank movement is shown against."""

    label: str  # e.g. 'preset “memsense”' or 'snapshot of 16:20:31'
    config: Config


class QuerySession(QObject):
    """Pool + config -> ranking, with the previous ranking kept for rank movement."""

    pool_changed = Signal(object)  # RecallPool | None
    config_changed = Signal(object)  # Config, once applied
    ranking_changed = Signal(object)  # Ranking
    pins_changed = Signal(object)  # tuple[str, ...]
    baseline_changed = Signal(object)  # Baseline | None
    rerank_failed = Signal(object)  # exception
    deepening = Signal(bool)  # True while the pool ranks deeper lists off the UI thread
    pool_deepened = Signal(object)  # RecallPool: the current pool is deeper; ask `deep_enough` again
    updating = Signal(bool)  # True while the ranking or pinned baseline on screen waits for a deeper pool
    _deepened = Signal(object, object)  # pool, exception or None (from the worker thread)

    def __init__(self, config: Config | None = None, throttle_ms: int = 30, parent: QObject | None = None):
        super().__init__(parent)
        self.config = config or Config()
        self.pool: RecallPool | None = None
        self.ranking: Ranking | None = None
        self.baseline: Ranking | None = None  # what movement is shown against
        self.pinned_baseline: Baseline | None = None
        self.gold: frozenset[str] = frozenset()
        self.evidence: frozenset[str] = frozenset()
        self.pins: tuple[str, ...] = ()
        self._pending: tuple[Config, str | None] | None = None
        self._gesture: tuple[str | None, float] = (None, 0.0)
        self._last_apply = 0.0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(throttle_ms)
        self._timer.timeout.connect(self.flush)
        self._deepening: RecallPool | None = None
        self._deepened.connect(self._on_deepened)
        self._baseline_due = False  # the pinned baseline is still to be ranked on this pool
        self.is_updating = False

    # ---- pool -----------------------------------------------------------------------------
    def set_pool(self, pool: RecallPool | None, gold: Iterable[str] = (), evidence: Iterable[str] = ()) -> None:
        """A new recall: no movement to show yet. `gold`: session ids judged relevant;
        `evidence`: the judged question's evidence turn ids (e.g. "D2:5")."""
        self.pool = pool
        self.gold = frozenset(gold)
        self.evidence = frozenset(evidence)
        self.baseline = None
        self.ranking = None
        self._baseline_due = self.pinned_baseline is not None
        self._set_updating(False)
        self.pool_changed.emit(pool)
        if pool is not None:
            self._rerank()

    # ---- config ---------------------------------------------------------------------------
    def request_config(self, cfg: Config, knob: str | None = None) -> None:
        """Throttled: applied now if the last re-rank is older than the interval, else at its end."""
        self._pending = (cfg, knob)
        if self._timer.isActive():
            return
        wait_ms = self._timer.interval() - (time.perf_counter() - self._last_apply) * 1000
        if wait_ms <= 0:
            self.flush()
        else:
            self._timer.start(int(wait_ms) + 1)

    def flush(self) -> None:
        """Apply the newest pending request now."""
        self._timer.stop()
        if self._pending is not None:
            cfg, knob = self._pending
            self._pending = None
            self.set_config(cfg, knob)

    def set_config(self, cfg: Config, knob: str | None = None) -> None:
        """Apply at once. `knob` names what changed; a new gesture starts a new baseline."""
        now = time.monotonic()
        last_knob, last_time = self._gesture
        new_gesture = knob is None or knob != last_knob or now - last_time > GESTURE_SECONDS
        if new_gesture and self.pinned_baseline is None:
            self.baseline = self.ranking
        self._gesture = (knob, now)
        self.config = cfg
        self.config_changed.emit(cfg)
        if self.pool is not None:
            self._rerank()

    def _rerank(self) -> None:
        """Re-rank under the settings, and rank the pinned baseline if it is due, each once the
        pool is deep enough for it; one deepening serves both, started after what is ready now
        is on screen (so the worker does not compete with it for the GIL). Meanwhile what is on
        screen stays, marked as updating, and a baseline not yet ranked shows no movement."""
        pool, pinned = self.pool, self.pinned_baseline
        if pool is None:
            return
        due = pinned.config if self._baseline_due and pinned is not None else None
        if due is not None and pool.ready(due.route_limit):
            self._baseline_due, due = False, None
            self.baseline = self._pinned_ranking()
        if pool.ready(self.config.route_limit):
            try:
                ranking = rerank(pool, self.config)
            except Exception as exc:  # noqa: BLE001 - a bad scheme or pool is reported, not fatal
                self.rerank_failed.emit(exc)
            else:
                self._last_apply = time.perf_counter()
                self.ranking = ranking
                self.ranking_changed.emit(ranking)
        self._set_updating(not self.deep_enough(self.config, *(() if due is None else (due,))))

    def _set_updating(self, on: bool) -> None:
        if on != self.is_updating:
            self.is_updating = on
            self.updating.emit(on)

    # ---- baseline ---------------------------------------------------------------------------
    def pin_baseline(self, label: str, cfg: Config) -> None:
        """Show movement against `cfg` (a preset, a snapshot) until unpinned, for every query."""
        self.pinned_baseline = Baseline(label, cfg)
        self._baseline_moved()

    def unpin_baseline(self) -> None:
        """Back to movement against the settings before the last gesture (none until then)."""
        self.pinned_baseline = None
        self._baseline_moved()

    def _pinned_ranking(self) -> Ranking | None:
        if self.pinned_baseline is None or self.pool is None:
            return None
        try:
            return rerank(self.pool, self.pinned_baseline.config)
        except Exception as exc:  # noqa: BLE001 - reported as any re-rank failure
            self.rerank_failed.emit(exc)
            return None

    def _baseline_moved(self) -> None:
        """A pinned baseline is ranked on the pool (once deep enough for it: no movement shown
        until then); none pinned: no movement until the next gesture."""
        self.baseline = None
        self._baseline_due = self.pinned_baseline is not None and self.pool is not None
        self.baseline_changed.emit(self.pinned_baseline)
        if self.pool is None:
            return
        shown = self.ranking
        self._rerank()
        if shown is not None and self.ranking is shown:  # it waits for a deeper pool too: no old movement
            self.ranking_changed.emit(shown)

    # ---- deepening ----------------------------------------------------------------------------
    @property
    def is_deepening(self) -> bool:
        return self._deepening is not None

    def deep_enough(self, *configs: Config) -> bool:
        """Whether re-ranking the pool under each of `configs` is quick (no route list to rank
        deeper than before). If not, the pool deepens on the worker thread, as deep as top_k's
        slider can ask of any of them, and `pool_deepened` follows: ask again then."""
        pool = self.pool
        if pool is None or all(pool.ready(cfg.route_limit) for cfg in configs):
            return True
        self._deepen(pool, max(max(cfg.route_limit, replace(cfg, top_k=TOP_K_MAX).route_limit) for cfg in configs))
        return False

    def fate(self, ranking: Ranking, memory_id: str) -> Fate:
        """`ranking.fate(memory_id)` ("why not"), unless it must read the query's deepest route
        lists (no counted route found the chunk within route_limit) and they are not ranked yet:
        then they are, on the worker thread, and the fate says it is updating; a new ranking of
        the deeper pool follows (`ranking_changed`)."""
        pool = self.pool
        source = pool.source if pool is not None else None
        if pool is None or source is None or ranking.pool.source is not source or pool.ready(source.max_depth) \
                or not reads_deepest(ranking, memory_id):
            return ranking.fate(memory_id)
        self._deepen(pool, source.max_depth)
        return Fate(memory_id, UPDATING, "ranking the query's deepest route lists to say why (a moment)")

    def _deepen(self, pool: RecallPool, depth: int) -> None:
        """Rank `pool` `depth` deep on a worker thread; `_on_deepened` then re-ranks with the
        newest settings (one worker per pool at a time: later asks wait for it, then ask again)."""
        if self._deepening is pool:
            return
        self._deepening = pool
        self.deepening.emit(True)

        def work() -> None:
            try:
                pool.at_depth(depth)
            except Exception as exc:  # noqa: BLE001 - reported on the UI thread
                self._deepened.emit(pool, exc)
                return
            self._deepened.emit(pool, None)

        threading.Thread(target=work, name="deepen-pool", daemon=True).start()

    def _on_deepened(self, pool: RecallPool, error: BaseException | None) -> None:
        if self._deepening is pool:  # not a newer pool's worker, still at work
            self._deepening = None
            self.deepening.emit(False)
        if pool is not self.pool:
            return  # a new query replaced it meanwhile
        if error is not None:
            self._set_updating(False)
            self.rerank_failed.emit(error)
            return
        self._rerank()
        self.pool_deepened.emit(pool)

    # ---- movement and pins ----------------------------------------------------------------
    def previous_rank(self, memory_id: str) -> int | None:
        """1-based rank under the baseline (None: no baseline or not returned)."""
        if self.baseline is None:
            return None
        ids = self.baseline.result_ids
        return ids.index(memory_id) + 1 if memory_id in ids else None

    def pin(self, memory_id: str) -> None:
        if memory_id not in self.pins:
            self.pins = self.pins + (memory_id,)
            self.pins_changed.emit(self.pins)

    def unpin(self, memory_id: str) -> None:
        if memory_id in self.pins:
            self.pins = tuple(p for p in self.pins if p != memory_id)
            self.pins_changed.emit(self.pins)
