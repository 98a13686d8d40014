"""Config requests from sliders, throttled: the newest request wins, and a burst of ticks costs
one apply per interval (the last tick is always applied)."""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal

from core.config import Config


class ConfigThrottle(QObject):
    """`request(cfg, knob)` at any rate; `apply(cfg, knob)` at most once per interval."""

    apply = Signal(object, object)  # Config, knob name or None

    def __init__(self, interval_ms: int = 30, parent: QObject | None = None):
        super().__init__(parent)
        self._pending: tuple[Config, str | None] | None = None
        self._last_apply = 0.0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.flush)

    def request(self, cfg: Config, knob: str | None = None) -> None:
        """Applied now if the last apply is older than the interval, else at its end."""
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
            self.apply.emit(cfg, knob)

    def applied(self) -> None:
        """A re-rank just went on screen: the next interval starts now."""
        self._last_apply = time.perf_counter()
