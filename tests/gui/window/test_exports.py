"""Exports you can trust: settings with where they came from, whole tables as CSV, a message
naming the file after every save."""
from __future__ import annotations

import csv

from core import config as config_io


def test_settings_export_has_a_provenance_header_and_loads_back(qtbot, ranked_window, tmp_path):
    w = ranked_window
    path = tmp_path / "tuned.toml"
    assert w.exports.export_config(path)
    text = path.read_text()
    assert text.startswith("# Exported by memsense-gui") and f"store: {w.ctx.location}" in text
    assert "preset: memsense" in text and "changed from Memsense's defaults: none" in text
    assert config_io.load(path) == w.ctx.session.config
    assert str(path) in w.statusBar().currentMessage()


def test_pool_and_matrix_export_every_row(qtbot, ranked_window, tmp_path):
    w = ranked_window
    ranking = w.ctx.session.ranking
    for which, rows in (("pool", len(ranking.candidates)), ("matrix", int((ranking.pool.ranks > 0).any(axis=1).sum()))):
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
