"""The history of typed queries: the query box completes from the queries asked before
(newest first, at most `LIMIT`), kept in the app's settings across sessions."""
from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtWidgets import QCompleter, QMainWindow

KEY = "query/history"
LIMIT = 50


class QueryHistory:
    def __init__(self, window: QMainWindow):
        self.window = window
        self.settings = window.ctx.settings
        self.model = QStringListModel(self._saved(), window)
        completer = QCompleter(self.model, window)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        window.query_edit.setCompleter(completer)
        self.completer = completer

    def _saved(self) -> list[str]:
        value = self.settings.value(KEY, [])
        items = [value] if isinstance(value, str) else list(value or [])
        return [str(q) for q in items if str(q).strip()][:LIMIT]

    def connect(self) -> None:
        self.window.ctx.recall_started.connect(self.add)

    @property
    def queries(self) -> list[str]:
        return self.model.stringList()

    def add(self, query: str) -> None:
        """Put `query` first (once), keep `LIMIT`, save."""
        queries = [query, *(q for q in self.queries if q != query)][:LIMIT]
        self.model.setStringList(queries)
        self.settings.setValue(KEY, queries)
