"""Settings and export actions: settings in and out (TOML or JSON, with a provenance header on
the way out, metric figures included when the settings were evaluated or tuned), results as
JSON, whole tables (pool, route-rank matrix, evaluation) as CSV, plots and the whole route-rank
matrix as PNG or SVG under a title (what, user, query, preset and changes, date), drawn from the
ranking on screen even when their panel is hidden; every save ends with a status message
naming the file. The settings of the last session come back at start."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from core import config as config_io
from core.atomic import write_output
from core.config import Config
from core.errors import MemsenseError
from core.config.presets import MEMSENSE
from core.config.provenance import Provenance, changed_knobs, save_with_provenance
from core.evaluation.tables import Table, evaluation_table, matrix_table, pool_table, write_csv
from memsense_gui.plots.export import PlotFile, export_plot, export_table_image
from memsense_gui.state.context import AppContext
from memsense_gui.views.dock import DockId
from memsense_gui.views.evaluation import EvaluationView
from memsense_gui.views.file_dialogs import ask_open, ask_save
from memsense_gui.window.parts import ExportUi

PLOTS = {"contributions": "Score contributions", "mmr": "MMR terms per pick", "matrix": "Route-rank matrix",
         "evaluation": "Evaluation per category"}
PANELS = {"mmr": DockId.MMR_TRACE, "matrix": DockId.ROUTE_RANKS}
CONFIG_KEY = "tuning/config"
"""The app's setting that keeps the current settings (JSON) for the next session."""


class ExportActions:
    """File > Import settings…, Export settings…, Export results…, Export plot."""

    def __init__(self, ctx: AppContext, window: ExportUi):
        self.window = window
        self.ctx = ctx
        self.last_plot: PlotFile | None = None  # where the last exported plot's data landed in its file

    def restore_config(self) -> None:
        """The settings and query of the last session (Memsense's defaults when unreadable); from
        now on the current settings are kept in the app's settings as they change."""
        text = self.ctx.settings.value(CONFIG_KEY, "")
        cfg = Config()
        if text:
            try:
                cfg = config_io.loads(str(text), "json", source="saved settings")
            except MemsenseError:
                cfg = Config()
        self.ctx.current.restore(cfg)
        self.ctx.current.changed.connect(self._keep_config)
        self.window.tuning.select_preset(MEMSENSE)
        self.window.query_edit.setText(str(self.ctx.settings.value("query/text", "")))

    def _keep_config(self, cfg: Config) -> None:
        self.ctx.settings.setValue(CONFIG_KEY, config_io.dumps(cfg, "json"))

    def provenance(self) -> Provenance:
        """Where the settings on screen come from: the preset picked, the store, the model, and
        the metric when these very settings were tuned or evaluated in this session."""
        engine = self.ctx.engine
        model = (engine.model_path if engine is not None else None) or ""
        return Provenance(preset=self.window.tuning.preset_combo.currentText(), store=self.ctx.location or "",
                          model=str(model), **self.known_figures(self.ctx.current.config))

    def known_figures(self, cfg: Config) -> dict[str, Any]:
        """Provenance metric fields for `cfg`: the auto-tune winner's train and held-out figures
        (cross-validated with folds) when `cfg` is that winner, else its figure in the last
        evaluation when `cfg` was one of the rows; {} when neither."""
        view = self._evaluation_view()
        if view is None:
            return {}
        tuner = getattr(view, "autotune", None)
        result = getattr(tuner, "result", None)
        if tuner is not None and result is not None and result.best.config == cfg:
            cv = tuner.cv
            if cv is not None and not cv.cancelled:
                lo, hi = cv.gain_ci
                how = (f"{len(cv.folds)}-fold cross-validation by user over {cv.questions} questions; "
                       f"start {cv.start_metric:.3f}, gain {cv.gain:+.3f} (95 % CI {lo:+.3f} to {hi:+.3f})")
                return {"metric": result.metric, "train": result.best.train, "held_out": cv.cv_metric,
                        "held_out_how": how}
            how = (f"held-out users {', '.join(result.test_users)}" if result.test_users else "no user held out")
            return {"metric": result.metric, "train": result.best.train, "held_out": result.best.test,
                    "held_out_how": how}
        for row in reversed(getattr(view, "results", None) or ()):  # "current settings" is the last row
            if row.config == cfg:
                metric = view.metric_combo.currentText() or f"recall_all@{row.k}"
                source = view.source.label().removeprefix("questions: ") if view.source is not None else "a file"
                return {"metric": metric, "evaluated": row.overall.get(metric),
                        "evaluated_on": f"{row.questions} questions ({source}) as row {row.preset!r}"}
        return {}

    def plot_title(self, which: str) -> list[str]:
        """What the plot shows, for which user and query, under which settings, and when."""
        when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        if which == "evaluation":
            view, results = self._evaluation()
            source = view.source.label().removeprefix("questions: ") if view.source is not None else "a file"
            return [f"{PLOTS[which]} · {view.metric_combo.currentText()} at k = {results[0].k} · "
                    f"{results[0].questions} questions ({source})",
                    f"{', '.join(r.preset for r in results)} · {self.ctx.location or 'no store'} · {when}"]
        ranking = self.ctx.session.ranking
        if ranking is None:
            raise MemsenseError("there are no results yet: run a query first")
        preset = self.window.tuning.preset_combo.currentText()
        base = self.ctx.presets.all().get(preset)
        changes = changed_knobs(ranking.config, base) if base is not None else []
        settings = f"preset {preset}" + (", changed: " + ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                                                                  for k, v, _ in changes[:6]) if changes else "")
        if len(changes) > 6:
            settings += f" and {len(changes) - 6} more"
        return [f"{PLOTS[which]} · user {ranking.pool.user_id} · “{ranking.pool.query}”",
                f"{settings} · {self.ctx.location or 'no store'} · {when}"]

    def export_config(self, path: str | Path) -> bool:
        return self._saved(self.ctx.attempt(
            lambda: save_with_provenance(self.ctx.current.config, path, self.provenance()), "Exporting settings"), path)

    def _saved(self, ok: bool, path: str | Path) -> bool:
        if ok:
            self.window.statusBar().showMessage(f"Saved {path}", 10_000)
        return ok

    def _evaluation(self) -> tuple[EvaluationView, list]:
        """The Evaluation view and its results, to export: only with every row scored under the
        settings it names."""
        view = self._evaluation_view()
        results = getattr(view, "results", [])
        if view is None or not results:
            raise MemsenseError("there is no evaluation yet: run one in the Evaluation view first")
        if view.current is not None:
            view.current.check_fresh()
        return view, results

    def _evaluation_view(self) -> EvaluationView | None:
        """The Evaluation view, when the window has one."""
        dock = self.window.dock(DockId.EVALUATION)
        return dock.view if dock is not None and isinstance(dock.view, EvaluationView) else None

    def table(self, which: str) -> Table:
        """`which`: pool | matrix (of the ranking on screen) | evaluation (the last evaluation)."""
        if which == "evaluation":
            return evaluation_table(self._evaluation()[1])
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
            text = json.dumps(memsense_export(self.ctx.current.config), indent=2)
            write_output(path, text + "\n")

        return self._saved(self.ctx.attempt(write, "Exporting Memsense options"), path)

    def ask_export_memsense_options(self) -> None:
        path = self._ask_path("Export for Memsense", "JSON (*.json)", "memsense-options.json")
        if path:
            self.export_memsense_options(path)

    def import_config(self, path: str | Path) -> bool:
        def load() -> None:  # one undoable step
            self.window.applying.apply_now(config_io.load(path), f"settings of {Path(path).name}")

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
            write_output(path, text + "\n")

        return self._saved(self.ctx.attempt(write, "Exporting results"), path)

    def export_plot(self, which: str, path: str | Path) -> bool:
        """`which`: contributions | mmr | matrix (every row) | evaluation (the per-category bars); PNG
        or SVG by the file's extension, drawn from the ranking on screen even when the panel is
        hidden (it is brought up to date first)."""
        w = self.window

        def write() -> None:
            title = self.plot_title(which)
            if which in PANELS:
                w.inspector.update_panel(PANELS[which], force=True)
            if which == "matrix":
                export_table_image(w.matrix_panel.view, Path(path), title)
                return
            view = self._evaluation_view()
            if which == "evaluation" and view is not None:  # its own size, whether its tab shows or not
                self.last_plot = export_plot(view.bars, path, title, size=view.bars.export_size())
                return
            plot = {"contributions": w.results.plot, "mmr": w.mmr_panel.plot}.get(which)
            if plot is None:
                raise MemsenseError(f"no plot {which!r}: choose contributions, mmr, matrix or evaluation")
            self.last_plot = export_plot(plot, path, title)

        return self._saved(self.ctx.attempt(write, "Exporting the plot"), path)

    def _ask_path(self, title: str, filters: str, default: str, kind: str = "export") -> str | None:
        """A save dialog in the folder of the last export; the chosen format's extension added."""
        picked = ask_save(self.window.window(), self.ctx.settings, kind, title, filters, default)
        return picked[0] if picked else None

    def ask_export_config(self) -> None:
        path = self._ask_path("Export settings", "TOML (*.toml);;JSON (*.json)", "memsense-settings.toml", "settings")
        if path:
            self.export_config(path)

    def ask_import_config(self) -> None:
        path = ask_open(self.window.window(), self.ctx.settings, "settings", "Import settings",
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
