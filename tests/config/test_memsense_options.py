"""Export for a live Memsense: the re-rank options object, top_k, and each knob's verdict."""
from __future__ import annotations

import json
from dataclasses import replace

from core.cli.main import main
from core.config import Config
from core.config.memsense_options import memsense_export


def _names(entries):
    return [e["name"] for e in entries]


def test_memsense_defaults_need_nothing():
    out = memsense_export(Config())
    assert out["rerankOptions"] == {"alpha": 0.1, "lambda": 0.78, "duplicateThreshold": 0.94}
    assert out["topK"] == 4 and out["appliesAsIs"] == [] and out["needsMemsenseChange"] == []
    assert "rrfK" in out["sameAsMemsense"] and "linearMinScore" not in out["sameAsMemsense"]  # another scheme's


def test_tuned_knobs_are_sorted_into_applies_and_needs_a_change():
    cfg = replace(Config(), mmr_lambda=0.9, top_k=6, rrf_k=40.0, turn_support_cap=0.2).with_weights(lexical=0.5)
    out = memsense_export(cfg)
    assert out["rerankOptions"]["lambda"] == 0.9 and out["topK"] == 6
    assert _names(out["appliesAsIs"]) == ["lambda", "topK"]
    assert _names(out["needsMemsenseChange"]) == ["rrfK", "turnSupportCap", "routeWeights.lexical"]
    change = out["needsMemsenseChange"][0]
    assert (change["value"], change["memsense"]) == (40.0, 15.0)


def test_another_scheme_needs_memsense_changed_with_its_knobs():
    out = memsense_export(replace(Config(), scheme="linear", linear_min_score=0.2))
    assert {"fusion", "linearMinScore"} <= set(_names(out["needsMemsenseChange"]))


def test_cli_writes_the_export(tmp_path, capsys):
    path = tmp_path / "memsense-options.json"
    assert main(["export-memsense", "--preset", "fusion_note", "--out", str(path)]) == 0
    assert "needs a change to Memsense's code: rrfK 15.0 -> 60.0" in capsys.readouterr().out
    assert json.loads(path.read_text())["needsMemsenseChange"][0]["name"] == "rrfK"
