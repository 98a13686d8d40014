"""Compare actions: two presets (or the current settings) re-ranking the same cached pool."""
from __future__ import annotations

from PySide6.QtWidgets import QMainWindow

from core.config import Config
from core.rank.rerank import rerank
from memsense_gui.views.compare import ComparePanel


class CompareActions:
    """Keeps the Compare dock on the current pool and the presets it offers."""

    def __init__(self, window: QMainWindow):
        self.window = window
        self.ctx = window.ctx
        self.panel: ComparePanel = window.compare_panel

    def connect(self) -> None:
        self.ctx.presets.presets_changed.connect(self.fill)
        self.panel.selection_changed.connect(self.update)
        self.fill()

    def fill(self) -> None:
        self.panel.set_names(self.ctx.presets.names())
        self.update()

    def _config_named(self, name: str) -> Config:
        return self.ctx.session.config if name == ComparePanel.CURRENT else self.ctx.presets.get(name)

    def update(self) -> None:
        pool = self.ctx.session.pool
        if pool is None:
            self.panel.set_rankings(None, None, frozenset())
            return
        try:
            a = rerank(pool, self._config_named(self.panel.a_combo.currentText()))
            b = rerank(pool, self._config_named(self.panel.b_combo.currentText()))
        except Exception as exc:  # noqa: BLE001
            self.ctx.report_error(exc, "Comparing presets")
            return
        self.panel.set_rankings(a, b, self.ctx.session.gold)

    def compare(self, a: str, b: str) -> None:
        """Show presets `a` and `b` (or ComparePanel.CURRENT) side by side."""
        self.window.raise_dock("Compare")
        self.panel.choose(a, b)
        self.window.inspector.update_panel("Compare", force=True)
