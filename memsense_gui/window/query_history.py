"""The history of typed queries: the query box completes from the queries asked before
(newest first, at most `LIMIT`), kept in the app's settings across sessions."""
from __future__ import annotations

from PySide6.QtCore import QObject, QStringListModel, Qt
from PySide6.QtWidgets import QCompleter, QLineEdit

from memsense_gui.state.context import AppContext

KEY = "query/history"
LIMIT = 50


class QueryHistory:
    def __init__(self, ctx: AppContext, query_edit: QLineEdit, parent: QObject):
        self.ctx = ctx
        self.settings = ctx.settings
        self.model = QStringListModel(self._saved(), parent)
        completer = QCompleter(self.model, parent)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        query_edit.setCompleter(completer)
        self.completer = completer

    def _saved(self) -> list[str]:
        value = self.settings.value(KEY, [])
        items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        return [str(q) for q in items if str(q).strip()][:LIMIT]

    def connect(self) -> None:
        self.ctx.recall_started.connect(self.add)

    @property
    def queries(self) -> list[str]:
        return self.model.stringList()

    def add(self, query: str) -> None:
        """Put `query` first (once), keep `LIMIT`, save."""
        queries = [query, *(q for q in self.queries if q != query)][:LIMIT]
        self.model.setStringList(queries)
        self.settings.setValue(KEY, queries)
