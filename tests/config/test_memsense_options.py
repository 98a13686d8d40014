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
    """Only top_k is sent with a search; the re-rank options need the service's search to pass them
    (it passes none), so they need a code change like the knobs written into Memsense's code."""
    cfg = replace(Config(), mmr_lambda=0.9, top_k=6, rrf_k=40.0, turn_support_cap=0.2).with_weights(lexical=0.5)
    out = memsense_export(cfg)
    assert out["rerankOptions"]["lambda"] == 0.9 and out["topK"] == 6
    assert _names(out["appliesAsIs"]) == ["topK"]
    assert _names(out["needsMemsenseChange"]) == ["rrfK", "lambda", "turnSupportCap", "routeWeights.lexical"]
    assert "passes none" in out["needsMemsenseChange"][1]["how"]
    change = out["needsMemsenseChange"][0]
    assert (change["value"], change["memsense"]) == (40.0, 15.0)
    assert out["summary"].startswith("needs a change to Memsense's code: rrfK 15.0 -> 40.0, lambda 0.78 -> 0.9")
    assert out["summary"].endswith("; topK 6 is sent with each search")


def test_the_export_says_one_consistent_thing(tmp_path, capsys):
    """Never "nothing needs a code change" beside re-rank options the service does not pass."""
    cases = {"alpha-only.json": ({"alpha": 0.3}, "needs a change to Memsense's code: alpha 0.1 -> 0.3"),
             "top-k-only.json": ({"topK": 8}, "no code change: send top_k 8 with each search"),
             "defaults.json": ({}, "Memsense's defaults: nothing to change")}
    for name, (config, expect) in cases.items():
        (tmp_path / name).write_text(json.dumps(config))
        assert main(["export-memsense", "--config", str(tmp_path / name), "--out", str(tmp_path / "o.json")]) == 0
        out = capsys.readouterr().out
        assert out.rstrip().endswith(expect), out
        assert json.loads((tmp_path / "o.json").read_text())["summary"] == expect
        assert "passes none" not in out or "needs a change" in out


def test_another_scheme_needs_memsense_changed_with_its_knobs():
    out = memsense_export(replace(Config(), scheme="linear", linear_min_score=0.2))
    assert {"fusion", "linearMinScore"} <= set(_names(out["needsMemsenseChange"]))


def test_cli_writes_the_export(tmp_path, capsys):
    path = tmp_path / "memsense-options.json"
    assert main(["export-memsense", "--preset", "fusion_note", "--out", str(path)]) == 0
    assert "needs a change to Memsense's code: rrfK 15.0 -> 60.0" in capsys.readouterr().out
    assert json.loads(path.read_text())["needsMemsenseChange"][0]["name"] == "rrfK"
