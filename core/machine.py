"""What this machine gives the app: where its cache and data folders are, and how many cores
this process may use. One place for both, so the CLI, the app and the embedder agree.

Folders come from `platformdirs`: on Linux `$XDG_CACHE_HOME/memsense` (~/.cache/memsense, where
embedding caches have always been) and `$XDG_DATA_HOME/memsense/memsense-gui`; on macOS and
Windows the platform's own cache and application-data folders.
"""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

CACHE_ENV = "MEMSENSE_CACHE"
HOME_ENV = "MEMSENSE_GUI_HOME"
ORGANIZATION = "memsense"
APPLICATION = "memsense-gui"


def cache_dir() -> Path:
    """The embedding cache and ONNX copies: `$MEMSENSE_CACHE`, else the platform's cache folder."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir(ORGANIZATION, appauthor=False))


def data_dir() -> Path:
    """The app's own files (settings, presets, stores, judgments): `$MEMSENSE_GUI_HOME`, else the
    platform's application-data folder + memsense/memsense-gui (where Qt's AppDataLocation puts
    it for this organization and application, on every platform)."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(appauthor=False, roaming=True)) / ORGANIZATION / APPLICATION


def usable_cpus() -> int:
    """The cores this process may run on: its CPU affinity (which taskset and container CPU
    sets narrow) where the platform has it, else every core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)
