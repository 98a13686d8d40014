"""Exports you can trust: settings with where they came from, whole tables as CSV, a message
naming the file after every save."""
from __future__ import annotations

import csv
import errno
import json
import os
import tempfile

import pytest

from core import config as config_io
from core.rank.record import pool_order
from tests.gui.fixtures import run_autotune
from memsense_gui.views.dock import DockId


def test_settings_export_has_a_provenance_header_and_loads_back(qtbot, ranked_window, tmp_path):
    w = ranked_window
    path = tmp_path / "tuned.toml"
    assert w.exports.export_config(path)
    text = path.read_text()
    assert text.startswith("# Exported by memsense-gui") and f"store: {w.ctx.location}" in text
    assert "preset: memsense" in text and "changed from Memsense's defaults: none" in text
    assert config_io.load(path) == w.ctx.current.config
    assert str(path) in w.statusBar().currentMessage()


@pytest.mark.parametrize("fault", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_a_write_fault_is_one_line_naming_the_chosen_file_for_every_text_export(qtbot, ranked_window, tmp_path,
                                                                                monkeypatch, fault):
    """Found by a walkthrough: Export results and Export for Memsense to a read-only folder said
    "unexpected OSError" and named the temp file beside the target; the other exports said
    "cannot write …; pick another folder". Now all do, naming the file chosen."""
    w = ranked_window
    out = tmp_path / "out"
    out.mkdir()

    def refuse(*args, **kwargs):
        raise OSError(fault, os.strerror(fault))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    exports = {"results.json": w.exports.export_results, "options.json": w.exports.export_memsense_options,
               "tuned.toml": w.exports.export_config, "pool.csv": lambda p: w.exports.export_table("pool", p)}
    for name, export in exports.items():
        with qtbot.waitSignal(w.ctx.error_reported, timeout=5000) as shown:
            assert not export(out / name)
        text = shown.args[0]
        assert f"cannot write {out / name}: {os.strerror(fault)}" in text and ".tmp" not in text, text
        assert "unexpected" not in text and ("free disk space" in text) == (fault == errno.ENOSPC), text
    assert list(out.iterdir()) == []


def test_pool_and_matrix_export_every_row(qtbot, ranked_window, tmp_path):
    w = ranked_window
    ranking = w.ctx.session.ranking
    for which, rows in (("pool", len(pool_order(ranking))), ("matrix", int((ranking.pool.ranks > 0).any(axis=1).sum()))):
        path = tmp_path / f"{which}.csv"
        assert w.exports.export_table(which, path)
        with path.open(encoding="utf-8") as fh:
            table = list(csv.reader(fh))
        assert len(table) == rows + 1 and table[0][1] == "snippet"
        assert str(path) in w.statusBar().currentMessage()


def test_evaluation_export_without_an_evaluation_says_what_to_do(qtbot, ranked_window, tmp_path):
    from memsense_gui.window.evaluation import install_evaluation

    w = ranked_window
    install_evaluation(w)
    assert not w.exports.export_table("evaluation", tmp_path / "evaluation.csv")
    assert not (tmp_path / "evaluation.csv").exists()


def test_settings_export_carries_the_tuned_and_evaluated_figures(qtbot, ranked_window, evaluation_window, tmp_path):
    w, view = evaluation_window("per_user", window=ranked_window)
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000) as blocker:
        view.start()
    current = blocker.args[0][-1]
    assert current.preset == "current settings"
    path = tmp_path / "evaluated.toml"
    assert w.exports.export_config(path)
    metric = view.metric_combo.currentText()
    assert (f"# metric: {metric}: evaluated {current.overall[metric]:.3f} (evaluated on {current.questions} "
            f"questions (questions.json) as row 'current settings')") in path.read_text()

    result = run_autotune(qtbot, view.autotune, folds=1, trials=6)
    w.ctx.current.apply(result.best.config, "tuned")
    path = tmp_path / "tuned.json"
    assert w.exports.export_config(path) and str(path) in w.statusBar().currentMessage()
    figures = json.loads(path.read_text())["provenance"]["metric"]
    assert figures == {"name": result.metric, "train": result.best.train, "held_out": result.best.test,
                       "held_out_how": f"held-out users {', '.join(result.test_users)}"}
    assert config_io.load(path) == result.best.config


def test_evaluation_exports_every_row_as_csv_and_its_bars_with_a_title(qtbot, ranked_window, evaluation_window,
                                                                         tmp_path):
    from tests.gui.svg_shapes import title

    w, view = evaluation_window("per_user", window=ranked_window)
    w.docks[DockId.EVALUATION].close()  # the bars are exported from a closed dock
    with qtbot.waitSignal(view.evaluation_finished, timeout=30_000) as blocker:
        view.start()
    results = blocker.args[0]
    path = tmp_path / "evaluation.csv"
    assert w.exports.export_table("evaluation", path) and str(path) in w.statusBar().currentMessage()
    with path.open(encoding="utf-8") as fh:
        table = list(csv.reader(fh))
    assert [row[0] for row in table[1:]] == [r.preset for r in results] and table[-1][0] == "current settings"
    metric = view.metric_combo.currentText()
    column = table[0].index(metric)
    assert [float(row[column]) for row in table[1:]] == [r.overall[metric] for r in results]
    svg = tmp_path / "bars.svg"
    assert w.exports.export_plot("evaluation", svg) and str(svg) in w.statusBar().currentMessage()
    assert title(svg).startswith(f"Evaluation per category · {metric} at k = 4 · {results[0].questions} questions")
    options = tmp_path / "memsense-options.json"
    assert w.exports.export_memsense_options(options) and str(options) in w.statusBar().currentMessage()


def test_settings_export_after_cross_validation_gives_the_cross_validated_figure(qtbot, ranked_window,
                                                                                  evaluation_window, tmp_path):
    w, view = evaluation_window("per_user", window=ranked_window)
    cv = run_autotune(qtbot, view.autotune, folds=2, trials=4, timeout=120_000)
    w.ctx.current.apply(cv.final.best.config, "tuned")
    path = tmp_path / "cv.toml"
    assert w.exports.export_config(path)
    lo, hi = cv.gain_ci
    assert (f"# metric: {cv.metric}: train {cv.final.best.train:.3f}, held-out {cv.cv_metric:.3f} (2-fold "
            f"cross-validation by user over {cv.questions} questions; start {cv.start_metric:.3f}, gain "
            f"{cv.gain:+.3f} (95 % CI {lo:+.3f} to {hi:+.3f}))") in path.read_text()
