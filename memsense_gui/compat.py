"""Guards against broken Qt bindings.

PySide6 6.12.0's `SignalInstance.emit()` returns `True` without taking a reference: every
signal emitted from Python drops one reference to `True`, and after a few thousand emits
(a minute of slider dragging) the interpreter aborts with "Fatal Python error: bool_dealloc".
The project excludes that release; `emit_leaks()` detects it (or any release like it).
"""
from __future__ import annotations

import sys

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import QObject, Signal

from core.errors import MemsenseError


class _Probe(QObject):
    pinged = Signal()


def emit_leaks(emits: int = 64) -> bool:
    """True when emitting a signal loses references to `True` (the PySide6 6.12.0 bug)."""
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(emits):
        probe.pinged.emit()
    lost = before - sys.getrefcount(True)
    return lost >= emits // 2


def check_bindings() -> None:
    """Raise MemsenseError, saying what to do, when the Qt bindings would crash the app."""
    if emit_leaks():
        raise MemsenseError(
            f"PySide6 {PYSIDE_VERSION} has a reference-counting bug in Signal.emit() that crashes the app "
            "after a few thousand signals; install another release: "
            ".venv/bin/pip install 'PySide6-Essentials>=6.7,!=6.12.0' (scripts/setup.sh does it)")
