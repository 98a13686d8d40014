"""Where the app keeps its things: the per-user data dir, settings, presets, stores and judgments.

`MEMSENSE_GUI_HOME` overrides the data dir (tests and portable installs); otherwise it is the
platform's application-data folder (`core.machine.data_dir`: ~/.local/share/memsense/memsense-gui
on Linux, where Qt's AppDataLocation puts it), which the CLI reads presets from too.
"""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QSettings

from core.machine import data_dir


def app_home() -> Path:
    """The per-user data dir, created on first use."""
    home = data_dir()
    home.mkdir(parents=True, exist_ok=True)
    return home


def settings(home: Path) -> QSettings:
    """Window layout, last store, appearance: an INI file inside the data dir."""
    return QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat)


def presets_file(home: Path) -> Path:
    return home / "presets.json"


def stores_dir(home: Path) -> Path:
    return home / "stores"


def demo_store_dir(home: Path) -> Path:
    return stores_dir(home) / "demo"


def judged_file(home: Path, location: str) -> Path:
    """The questions judged in the app on one store: `<data>/judged/<store name>.json`."""
    name = location.rstrip("/\\").rsplit("/", 1)[-1].rsplit("\\", 1)[-1] if location else ""
    name = re.sub(r"[^\w.-]+", "_", name).strip("._") or "store"
    return home / "judged" / f"{name}.json"


def study_file(home: Path, location: str, questions: Path) -> Path:
    """The auto-tune studies (an Optuna journal, `core.evaluation.study.file_storage`) of one
    store and question set: `<data>/studies/<store name>-<digest of both paths>.journal`, so a
    run can be resumed later."""
    import hashlib

    digest = hashlib.sha1(f"{location}\n{Path(questions).resolve()}".encode()).hexdigest()[:10]
    return home / "studies" / f"{judged_file(home, location).stem}-{digest}.journal"
