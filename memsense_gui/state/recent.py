"""Recent stores and recent question files: newest first, remembered in the app's settings.

A store is a folder or a server URL; a question file a path. Entries whose folder or file is
gone are pruned when the list is read, and the caller says which (a status line)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from core.recall.store import is_url

LIMIT = 10
STORES = "recent/stores"
QUESTIONS = "recent/questions"


class RecentList:
    """One list of recent locations under `key` in `settings`."""

    def __init__(self, settings: QSettings, key: str, *, folders: bool, limit: int = LIMIT):
        self.settings = settings
        self.key = key
        self.folders = folders
        self.limit = limit

    def _saved(self) -> list[str]:
        value = self.settings.value(self.key, [])
        items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        return [str(v) for v in items if str(v).strip()]

    def _save(self, items: list[str]) -> None:
        self.settings.setValue(self.key, items[: self.limit])

    def add(self, location: str | Path) -> None:
        """`location` first (once)."""
        text = str(location)
        self._save([text, *(i for i in self._saved() if i != text)])

    def exists(self, location: str) -> bool:
        if is_url(location):
            return True  # a server is not checked here: opening it says whether it answers
        path = Path(location)
        return path.is_dir() if self.folders else path.is_file()

    def items(self) -> tuple[list[str], list[str]]:
        """(the entries that exist, the missing ones now pruned from the list)."""
        saved = self._saved()
        kept = [i for i in saved if self.exists(i)]
        missing = [i for i in saved if i not in kept]
        if missing:
            self._save(kept)
        return kept, missing
