"""The presets the app offers: the built-in ones and the user's own, with a change signal."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from core.config import Config
from core.config.presets import BUILTIN, PresetStore


class PresetLibrary(QObject):
    """Built-in and user presets; `presets_changed` after every save, rename or delete."""

    presets_changed = Signal()

    def __init__(self, store: PresetStore, parent: QObject | None = None):
        super().__init__(parent)
        self.store = store

    def all(self) -> dict[str, Config]:
        return self.store.all()

    def names(self) -> list[str]:
        return list(self.store.all())

    def is_builtin(self, name: str) -> bool:
        return name in BUILTIN

    def get(self, name: str) -> Config:
        return self.store.get(name)

    def save(self, name: str, cfg: Config) -> None:
        self.store.save(name, cfg)
        self.presets_changed.emit()

    def rename(self, old: str, new: str) -> None:
        self.store.rename(old, new)
        self.presets_changed.emit()

    def delete(self, name: str) -> None:
        self.store.delete(name)
        self.presets_changed.emit()
