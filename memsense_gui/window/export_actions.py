"""Settings and export actions: settings in and out (TOML or JSON), results as JSON, plots
and the route-rank matrix as PNG or SVG; the settings of the last session come back at start."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtWidgets import QFileDialog, QMainWindow

from core import config as config_io
from core.atomic import write_text_atomic
from core.config import Config
from core.errors import MemsenseError
from core.config.presets import MEMSENSE
from memsense_gui.plots.export import export_plot, export_widget_image


class ExportActions:
    """File > Import settings…, Export settings…, Export results…, Export plot."""

    def __init__(self, window: QMainWindow):
        self.window = window
        self.ctx = window.ctx

    def restore_config(self) -> None:
        """The settings and query of the last session (Memsense's defaults when unreadable)."""
        text = self.ctx.settings.value("tuning/config", "")
        cfg = Config()
        if text:
            try:
                cfg = config_io.loads(str(text), "json", source="saved settings")
            except MemsenseError:
                cfg = Config()
        self.window.tuning.set_config(cfg)
        self.ctx.session.set_config(cfg, "restore")
        self.window.tuning.select_preset(MEMSENSE)
        self.window.query_edit.setText(str(self.ctx.settings.value("query/text", "")))

    def export_config(self, path: str | Path) -> bool:
        return self.ctx.attempt(lambda: config_io.save(self.ctx.session.config, path), "Exporting settings")

    def export_memsense_options(self, path: str | Path) -> bool:
        """The settings as a live Memsense takes them: its re-rank options object and top_k, and
        which knobs need a change to its code (core.config.memsense_options)."""
        from core.config.memsense_options import memsense_export

        def write() -> None:
            text = json.dumps(memsense_export(self.ctx.session.config), indent=2)
            write_text_atomic(Path(path), text + "\n")

        return self.ctx.attempt(write, "Exporting Memsense options")

    def ask_export_memsense_options(self) -> None:
        path = self._ask_path("Export for Memsense", "JSON (*.json)", "memsense-options.json")
        if path:
            self.export_memsense_options(path)

    def import_config(self, path: str | Path) -> bool:
        def load() -> None:
            cfg = config_io.load(path)
            self.window.tuning.set_config(cfg)
            self.ctx.session.set_config(cfg, "import")

        return self.ctx.attempt(load, "Importing settings")

    def results_document(self) -> dict[str, Any]:
        ranking = self.ctx.session.ranking
        if ranking is None:
            raise MemsenseError("there are no results yet: run a query first")
        return {"user_id": ranking.pool.user_id, "query": ranking.pool.query,
                "config": config_io.to_dict(ranking.config), "results": list(ranking.results)}

    def export_results(self, path: str | Path) -> bool:
        def write() -> None:
            text = json.dumps(self.results_document(), indent=2, ensure_ascii=False, default=_json_default)
            write_text_atomic(Path(path), text + "\n")

        return self.ctx.attempt(write, "Exporting results")

    def export_plot(self, which: str, path: str | Path) -> bool:
        """`which`: contributions | mmr | matrix; PNG or SVG by the file's extension."""
        w = self.window

        def write() -> None:
            if which == "matrix":
                export_widget_image(w.matrix_panel, Path(path))
            else:
                export_plot(w.results.plot if which == "contributions" else w.mmr_panel.plot, path)

        return self.ctx.attempt(write, "Exporting the plot")

    def _ask_path(self, title: str, filters: str, default: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self.window, title, str(Path.home() / default), filters)
        return path or None

    def ask_export_config(self) -> None:
        path = self._ask_path("Export settings", "TOML (*.toml);;JSON (*.json)", "memsense-settings.toml")
        if path:
            self.export_config(path)

    def ask_import_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Import settings", str(Path.home()),
                                              "Settings (*.toml *.json)")
        if path:
            self.import_config(path)

    def ask_export_results(self) -> None:
        path = self._ask_path("Export results", "JSON (*.json)", "memsense-results.json")
        if path:
            self.export_results(path)

    def ask_export_plot(self, which: str) -> None:
        path = self._ask_path("Export plot", "PNG image (*.png);;SVG vector (*.svg)", f"memsense-{which}.png")
        if path:
            self.export_plot(which, path)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
