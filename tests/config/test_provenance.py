"""Exported configs say where they came from and still load as the same config."""
from __future__ import annotations

import json

import pytest

from core import config as config_io
from core.config import Config
from core.config.provenance import Provenance, changed_knobs, save_with_provenance

TUNED = Config(mmr_lambda=0.5, rrf_k=30.0).with_weights(lexical=2.0)
PROV = Provenance(preset="tuned", store="/tmp/s", model="all-MiniLM-L6-v2", metric="recall_all@4", train=0.71,
                  held_out=0.69, held_out_how="5-fold cross-validation by user", date="2026-11-21T13:00:00+00:00")


def test_changed_knobs_names_exactly_the_changes():
    assert sorted(changed_knobs(TUNED)) == [("lambda", 0.5, 0.78), ("routeWeights.lexical", 2.0, 1.0),
                                            ("rrfK", 30.0, 15.0)]
    assert changed_knobs(Config()) == []


@pytest.mark.parametrize("suffix", ["toml", "json"])
def test_header_is_written_and_the_file_loads_as_the_same_config(tmp_path, suffix):
    path = save_with_provenance(TUNED, tmp_path / f"tuned.{suffix}", PROV)
    text = path.read_text()
    for fact in ("tuned", "/tmp/s", "all-MiniLM-L6-v2", "recall_all@4", "0.71", "0.69", "2026-11-21", "lambda"):
        assert fact in text
    assert config_io.load(path) == TUNED
    if suffix == "toml":
        assert text.startswith("# Exported by memsense-gui") and "#   rrfK = 30.0 (default 15.0)" in text
    else:
        assert json.loads(text)["provenance"]["metric"]["held_out"] == 0.69
