"""Compare actions: two presets (or the current settings) re-ranking the same cached pool.

A preset that needs deeper route lists than the pool holds has the session deepen it off the
UI thread, a job on its runner (`QuerySession.deep_enough`); the panel keeps its rows greyed as updating meanwhile."""
from __future__ import annotations

from core.config import Config
from memsense_gui.state.context import AppContext
from memsense_gui.views.compare import ComparePanel
from memsense_gui.views.dock import DockId
from memsense_gui.window.parts import CompareUi


class CompareActions:
    """Keeps the Compare dock on the current pool and the presets it offers."""

    def __init__(self, ctx: AppContext, window: CompareUi):
        self.window = window
        self.ctx = ctx
        self.panel: ComparePanel = window.compare_panel

    def connect(self) -> None:
        self.ctx.presets.presets_changed.connect(self.fill)
        self.panel.selection_changed.connect(self.update)
        self.ctx.session.pool_deepened.connect(lambda _pool: self.window.inspector.update_panel(DockId.COMPARE))
        self.fill()

    def fill(self) -> None:
        self.panel.set_names(self.ctx.presets.names())
        self.update()

    def _config_named(self, name: str) -> Config:
        return self.ctx.current.config if name == ComparePanel.CURRENT else self.ctx.presets.get(name)

    def update(self) -> None:
        pool = self.ctx.session.pool
        if pool is None:
            self.panel.set_rankings(None, None, frozenset())
            return
        try:
            a_cfg = self._config_named(self.panel.a_combo.currentText())
            b_cfg = self._config_named(self.panel.b_combo.currentText())
            if not self.ctx.session.deep_enough(a_cfg, b_cfg):
                self.panel.set_updating()
                return
            a, b = self.ctx.session.rerank(a_cfg), self.ctx.session.rerank(b_cfg)
        except Exception as exc:  # noqa: BLE001
            self.ctx.report_error(exc, "Comparing presets")
            return
        self.panel.set_rankings(a, b, self.ctx.session.gold)

    def compare(self, a: str, b: str) -> None:
        """Show presets `a` and `b` (or ComparePanel.CURRENT) side by side."""
        self.window.raise_dock(DockId.COMPARE)
        self.panel.choose(a, b)
        self.window.inspector.update_panel(DockId.COMPARE, force=True)
