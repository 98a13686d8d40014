"""The app's own icons: small SVGs drawn for this project, shipped in the package
(`memsense_gui/icons/`, listed as package data in pyproject.toml) and loaded through QIcon's
SVG engine, so they are sharp at any size and need no icon theme on the machine."""
from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from PySide6.QtGui import QIcon

NAMES = ("memsense", "search", "pin", "baseline")
"""memsense: the window; search: run the query; pin: follow a memory's fate (as the ⚑ mark in
tables); baseline: rank movement against pinned settings."""


def path(name: str) -> Path:
    """The SVG file of icon `name` (one of `NAMES`)."""
    if name not in NAMES:
        raise KeyError(f"no icon named {name!r}; the app's icons are {', '.join(NAMES)}")
    return Path(str(files("memsense_gui") / "icons" / f"{name}.svg"))


@cache
def icon(name: str) -> QIcon:
    """Icon `name`, loaded once (a QApplication must exist)."""
    return QIcon(str(path(name)))
