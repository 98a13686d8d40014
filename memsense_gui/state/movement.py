"""What rank movement is shown against, and the pinned chunks ("why not" follows them).

A pinned baseline (a preset, or a snapshot of the settings at some moment) is ranked on each
new pool once the pool is deep enough for it; with none pinned, movement is shown against the
settings before the last gesture: changes of one knob closer together than `GESTURE_SECONDS`,
ended early by `end_gesture` (a slider released, a typed value entered), so a second drag of a
knob shows movement since the first.
No Qt beyond signals: testable without a window.
"""
from __future__ import annotations

import time
from typing import NamedTuple

from PySide6.QtCore import QObject, Signal

from core.config import Config
from core.rank.ranking import Ranking

GESTURE_SECONDS = 1.0
"""Changes of one knob closer together than this are one gesture: movement is shown
against the settings before the gesture started."""


class Baseline(NamedTuple):
    """Pinned settings that rank movement is shown against."""

    label: str  # e.g. 'preset “memsense”' or 'snapshot of 16:20:31'
    config: Config


class Movement(QObject):
    """The baseline ranking (pinned or the last gesture's) and the pinned chunks."""

    pins_changed = Signal(object)  # tuple[str, ...]
    baseline_changed = Signal(object)  # Baseline | None

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.baseline: Ranking | None = None  # what movement is shown against
        self.pinned: Baseline | None = None
        self.due = False  # the pinned baseline is still to be ranked on the current pool
        self.pins: tuple[str, ...] = ()  # the shown user's
        self._user = ""
        self._pins_of: dict[str, tuple[str, ...]] = {}  # the other users' pins, put aside
        self._gesture: tuple[str | None, float] = (None, 0.0)

    def new_pool(self) -> None:
        """A new recall: no movement until the pinned baseline is ranked on it (or a gesture)."""
        self.baseline = None
        self.due = self.pinned is not None

    def config_changed(self, knob: str | None, shown: Ranking | None) -> None:
        """The settings change (`knob`: what changed); a new gesture, with nothing pinned,
        shows movement against `shown`, the ranking before it."""
        now = time.monotonic()
        last_knob, last_time = self._gesture
        if (knob is None or knob != last_knob or now - last_time > GESTURE_SECONDS) and self.pinned is None:
            self.baseline = shown
        self._gesture = (knob, now)

    def end_gesture(self) -> None:
        """The gesture is over (a drag released, a value entered): the next change starts one."""
        self._gesture = (None, 0.0)

    def due_config(self) -> Config | None:
        """The pinned settings still to be ranked on the current pool, if any."""
        return self.pinned.config if self.due and self.pinned is not None else None

    def ranked(self, ranking: Ranking | None) -> None:
        """The pinned baseline ranked on the current pool (None: it failed)."""
        self.due = False
        self.baseline = ranking

    def pin_baseline(self, label: str, cfg: Config, has_pool: bool) -> None:
        """Show movement against `cfg` for every query until unpinned (ranked when the pool allows)."""
        self.pinned = Baseline(label, cfg)
        self._moved(has_pool)

    def unpin_baseline(self) -> None:
        """Back to movement against the settings before the last gesture (none until then)."""
        self.pinned = None
        self._moved(False)

    def _moved(self, has_pool: bool) -> None:
        self.baseline = None
        self.due = self.pinned is not None and has_pool
        self.baseline_changed.emit(self.pinned)

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

    def show_user(self, user_id: str) -> None:
        """Pins are one user's: another user's chunks are not in this user's pools. The shown
        user's pins are put aside, and `user_id`'s, if any, are back."""
        if user_id == self._user:
            return
        if self.pins:
            self._pins_of[self._user] = self.pins
        self._user = user_id
        self._set_pins(self._pins_of.pop(user_id, ()))

    def clear_pins(self) -> None:
        """No chunk pinned, for any user (another store: its memory ids are not this store's)."""
        self._pins_of.clear()
        self._set_pins(())

    def _set_pins(self, pins: tuple[str, ...]) -> None:
        if pins != self.pins:
            self.pins = pins
            self.pins_changed.emit(self.pins)
