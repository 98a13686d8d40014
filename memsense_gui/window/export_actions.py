"""Settings and export actions: settings in and out (TOML or JSON, with a provenance header on
the way out), results as JSON, whole tables (pool, route-rank matrix, evaluation) as CSV, plots
and the route-rank matrix as PNG or SVG; every save ends with a status message naming the file.
The settings of the last session come back at start."""
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
from core.config.provenance import Provenance, save_with_provenance
from core.evaluation.tables import Table, evaluation_table, matrix_table, pool_table, write_csv
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

    def provenance(self) -> Provenance:
        """Where the settings on screen come from: the preset picked, the store, the model."""
        engine = self.ctx.engine
        model = getattr(getattr(engine, "embedder", None), "model_path", "")
        return Provenance(preset=self.window.tuning.preset_combo.currentText(), store=self.ctx.location or "",
                          model=str(model))

    def export_config(self, path: str | Path) -> bool:
        return self._saved(self.ctx.attempt(
            lambda: save_with_provenance(self.ctx.session.config, path, self.provenance()), "Exporting settings"), path)

    def _saved(self, ok: bool, path: str | Path) -> bool:
        if ok:
            self.window.statusBar().showMessage(f"Saved {path}", 10_000)
        return ok

    def table(self, which: str) -> Table:
        """`which`: pool | matrix (of the ranking on screen) | evaluation (the last evaluation)."""
        if which == "evaluation":
            dock = self.window.docks.get("Evaluation")
            results = getattr(dock.view, "results", []) if dock is not None else []
            if not results:
                raise MemsenseError("there is no evaluation yet: run one in the Evaluation view first")
            return evaluation_table(results)
        ranking = self.ctx.session.ranking
        if ranking is None:
            raise MemsenseError("there are no results yet: run a query first")
        return pool_table(ranking) if which == "pool" else matrix_table(ranking)

    def export_table(self, which: str, path: str | Path) -> bool:
        """The whole table as CSV (every row, not the rows on screen)."""
        return self._saved(self.ctx.attempt(lambda: write_csv(self.table(which), path), "Exporting the table"), path)

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

        return self._saved(self.ctx.attempt(write, "Exporting results"), path)

    def export_plot(self, which: str, path: str | Path) -> bool:
        """`which`: contributions | mmr | matrix; PNG or SVG by the file's extension."""
        w = self.window

        def write() -> None:
            if which == "matrix":
                export_widget_image(w.matrix_panel, Path(path))
            else:
                export_plot(w.results.plot if which == "contributions" else w.mmr_panel.plot, path)

        return self._saved(self.ctx.attempt(write, "Exporting the plot"), path)

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

    def ask_export_table(self, which: str) -> None:
        path = self._ask_path("Export table", "CSV (*.csv)", f"memsense-{which}.csv")
        if path:
            self.export_table(which, path)

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
