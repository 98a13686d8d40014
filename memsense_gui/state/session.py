"""The current query: its cached recall pool, the config and the re-ranking of one by the other.

Recall once, re-rank many: a new config re-ranks the cached pool (about a millisecond) with
no new search. Config requests from sliders are throttled, and the newest request wins: a
burst of slider ticks costs one re-rank per interval, and the last tick is always applied.
"""
from __future__ import annotations

import time
from typing import Iterable

from PySide6.QtCore import QObject, QTimer, Signal

from core.config import Config
from core.rank.pool import RecallPool
from core.rank.ranking import Ranking
from core.rank.rerank import rerank

GESTURE_SECONDS = 1.0
"""Changes of one knob closer together than this are one gesture: movement is shown
against the settings before the gesture started."""


class QuerySession(QObject):
    """Pool + config -> ranking, with the previous ranking kept for rank movement."""

    pool_changed = Signal(object)  # RecallPool | None
    config_changed = Signal(object)  # Config, once applied
    ranking_changed = Signal(object)  # Ranking
    pins_changed = Signal(object)  # tuple[str, ...]
    rerank_failed = Signal(object)  # exception

    def __init__(self, config: Config | None = None, throttle_ms: int = 30, parent: QObject | None = None):
        super().__init__(parent)
        self.config = config or Config()
        self.pool: RecallPool | None = None
        self.ranking: Ranking | None = None
        self.baseline: Ranking | None = None
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

    # ---- pool -----------------------------------------------------------------------------
    def set_pool(self, pool: RecallPool | None, gold: Iterable[str] = (), evidence: Iterable[str] = ()) -> None:
        """A new recall: no movement to show yet. `gold`: session ids judged relevant;
        `evidence`: the judged question's evidence turn ids (e.g. "D2:5")."""
        self.pool = pool
        self.gold = frozenset(gold)
        self.evidence = frozenset(evidence)
        self.baseline = None
        self.ranking = None
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
        if knob is None or knob != last_knob or now - last_time > GESTURE_SECONDS:
            self.baseline = self.ranking
        self._gesture = (knob, now)
        self.config = cfg
        self.config_changed.emit(cfg)
        if self.pool is not None:
            self._rerank()

    def _rerank(self) -> None:
        try:
            ranking = rerank(self.pool, self.config)
        except Exception as exc:  # noqa: BLE001 - a bad scheme or pool is reported, not fatal
            self.rerank_failed.emit(exc)
            return
        self._last_apply = time.perf_counter()
        self.ranking = ranking
        self.ranking_changed.emit(ranking)

    # ---- movement and pins ----------------------------------------------------------------
    def previous_rank(self, memory_id: str) -> int | None:
        """1-based rank under the previous settings (None: no baseline or not returned)."""
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
