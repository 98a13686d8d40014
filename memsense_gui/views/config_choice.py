"""A choice of settings for A/B views (Impact, the report): the current settings, the pinned
baseline, any preset, or a config file.

`resolve()` gives the choice's name and `Config` as they are now (the current settings follow
the sliders); `changed` follows a new choice, and the list is refilled (the choice kept) when the
presets or the baseline change.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QWidget

from core import config as config_io
from core.config import Config
from core.config.presets import MEMSENSE
from core.errors import MemsenseError
from memsense_gui.state.context import AppContext

CURRENT = "Current settings"
BASELINE = "Pinned baseline"
FILE = "Config file…"
SEP = "\x1f"
"""Item data: "kind<SEP>name" (kind: current, baseline, preset, file, ask; name: a preset or a path)."""


def _key(kind: str, name: str = "") -> str:
    return f"{kind}{SEP}{name}"


class ConfigChoice(QComboBox):
    """One side's settings (module docstring). `default`: "current" or "baseline" (the pinned
    baseline when there is one, else Memsense's own preset)."""

    choice_changed = Signal()

    def __init__(self, ctx: AppContext, default: str = "current", parent: QWidget | None = None):
        super().__init__(parent)
        self.ctx = ctx
        self.files: list[Path] = []
        self._last = 0
        self._fill()
        self._select_default(default)
        self.activated.connect(self._activated)
        self.currentIndexChanged.connect(lambda _i: self.choice_changed.emit())
        ctx.presets.presets_changed.connect(self._fill)
        ctx.session.baseline_changed.connect(self._fill)

    def _entries(self) -> list[tuple[str, str]]:
        entries = [(CURRENT, _key("current"))]
        if self.ctx.session.pinned_baseline is not None:
            entries.append((f"{BASELINE} ({self.ctx.session.pinned_baseline.label})", _key("baseline")))
        entries += [(f"Preset “{n}”", _key("preset", n)) for n in self.ctx.presets.names()]
        entries += [(f"File {p.name}", _key("file", str(p))) for p in self.files]
        return [*entries, (FILE, _key("ask"))]

    def chosen(self) -> tuple[str, str]:
        """(kind, name) of the choice: ("current", ""), ("baseline", ""), ("preset", name), ("file", path)."""
        kind, _, name = str(self.currentData() or _key("current")).partition(SEP)
        return kind, name

    def _fill(self, *_: object) -> None:
        kept = self.currentData()
        self.blockSignals(True)
        self.clear()
        for text, data in self._entries():
            self.addItem(text, data)
        index = self.findData(kept) if kept is not None else -1
        if index < 0 and kept == _key("baseline"):
            index = self.findData(_key("preset", MEMSENSE))  # the baseline was cleared: Memsense's own
        self.setCurrentIndex(max(index, 0))
        self._last = self.currentIndex()
        self.blockSignals(False)
        if kept is not None and self.currentData() != kept:
            self.choice_changed.emit()

    def _select_default(self, default: str) -> None:
        if default == "baseline":
            index = self.findData(_key("baseline"))
            self.setCurrentIndex(index if index >= 0 else max(self.findData(_key("preset", MEMSENSE)), 0))
        self._last = self.currentIndex()

    def _activated(self, index: int) -> None:
        if self.itemData(index) == _key("ask"):
            path, _ = QFileDialog.getOpenFileName(self.window(), "Settings file", str(Path.home()),
                                                  "Settings (*.toml *.json)")
            if not path:
                self.setCurrentIndex(self._last)
                return
            self.add_file(path)
        self._last = self.currentIndex()

    def add_file(self, path: str | Path) -> None:
        """Choose a config file (read when resolved: a bad file is reported then)."""
        path = Path(path)
        if path not in self.files:
            self.files.append(path)
        self._fill()
        self.setCurrentIndex(self.findData(_key("file", str(path))))

    def choose(self, kind: str, name: str = "") -> None:
        """Choose "current", "baseline", ("preset", name) or ("file", path) by code."""
        index = self.findData(_key(kind, name))
        if index < 0:
            raise MemsenseError(f"no {kind} {name!r} to choose")
        self.setCurrentIndex(index)

    def resolve(self) -> tuple[str, Config]:
        """The chosen settings now: (a name for tables and titles, the config)."""
        kind, name = self.chosen()
        if kind == "baseline" and self.ctx.session.pinned_baseline is not None:
            baseline = self.ctx.session.pinned_baseline
            return baseline.label, baseline.config
        if kind == "preset":
            return name, self.ctx.presets.get(name)
        if kind == "file":
            return Path(name).name, config_io.load(name)
        return "current settings", self.ctx.current.config
