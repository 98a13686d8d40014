"""`memsense tune --export FILE` writes the tuned config with a provenance header (start preset,
store, model, metric with its train and held-out figures, per-fold figures with --folds, date,
knobs changed from Memsense's defaults) and the file loads back as the same config."""
from __future__ import annotations

import json
import re
from datetime import datetime

import pytest

from core import config as config_io
from core.config import Config
from core.config.provenance import changed_knobs
from core.errors import MemsenseError
from tests.evaluation.test_evaluate import dataset, fake_engine  # noqa: F401 - fixtures
from tests.fixtures import run_cli

WEAK_START = Config().with_weights(**{r: 0.0 for r in Config().route_weights}).with_weights(facet_events=1.0)
"""A start that tuning beats on held-out users of the synthetic pools, so --folds offers a config."""


def _header(text: str) -> list[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("# ")]


def _date(header: list[str]) -> datetime:
    stamp = re.match(r"Exported by memsense-gui on (\S+)", header[0]).group(1)
    return datetime.fromisoformat(stamp)


def test_split_export_names_store_model_metric_and_changes(capsys, dataset, fake_engine, tmp_path):  # noqa: F811
    export = tmp_path / "best.toml"
    code, out, err = run_cli(capsys, "tune", dataset, "--store", tmp_path / "store", "--train", "u1",
                             "--test", "u3", "--trials", 6, "--sensitivity-points", 0, "--json", "--quiet",
                             "--presets", tmp_path / "p.json", "--export", export)
    assert code == 0, err
    data = json.loads(out)
    best = data["best"]
    header = _header(export.read_text())
    assert _date(header).tzinfo is not None
    assert "preset: tuned from memsense (tpe search, 6 trials, seed 0)" in header
    assert f"store: {tmp_path / 'store'}" in header and "model: all-MiniLM-L6-v2 (bundled)" in header
    start_test = data["start"]["test"]
    assert (f"metric: recall_all@4: train {best['train']:.3f}, held-out {best['test']:.3f} "
            f"(held-out users u3, 6 questions; start {start_test:.3f})") in header
    cfg = config_io.load(export)
    assert cfg == config_io.from_dict(best["config"])
    changed = changed_knobs(cfg)
    assert [line for line in header if line.startswith("  ")] == [f"  {k} = {v!r} (default {d!r})" for k, v, d in changed]


@pytest.mark.parametrize("suffix", ["toml", "json"])
def test_folds_export_carries_the_cross_validated_and_per_fold_figures(capsys, dataset, fake_engine,  # noqa: F811
                                                                        tmp_path, suffix):
    start, export = tmp_path / "start.toml", tmp_path / f"cv.{suffix}"
    config_io.save(WEAK_START, start)
    code, out, err = run_cli(capsys, "tune", dataset, "--store", tmp_path / "store", "--folds", 3, "--trials", 8,
                             "--sensitivity-points", 0, "--start", start, "--json", "--quiet",
                             "--presets", tmp_path / "p.json", "--export", export)
    assert code == 0, err
    data = json.loads(out)
    assert data["exported"] == str(export)
    cfg = config_io.load(export)
    assert cfg == config_io.from_dict(data["best"]) == config_io.from_dict(data["chosen"]["config"])
    chosen = data["chosen"]
    if suffix == "json":
        provenance = json.loads(export.read_text())["provenance"]
        metric = provenance["metric"]
        assert metric["held_out"] == chosen["cv_mean"]
        assert metric.get("train") == (data["final"]["best"]["train"] if chosen["kind"] == "search" else None)
        assert provenance["choice"]["why"].startswith(chosen["name"])
        assert len([k for k in provenance["choice"] if k.startswith("cross-validated ")]) == \
            len(data["choice"]["contenders"])
        assert [(f["fold"], f["held_out_users"], f["train"], f["held_out"]) for f in metric["folds"]] == \
            [(f["fold"], f["held_users"], f["train"], f["held_out"]) for f in data["folds"]]
        return
    header = _header(export.read_text())
    metric = next(line for line in header if line.startswith("metric: "))
    train = f"train {data['final']['best']['train']:.3f}, " if chosen["kind"] == "search" else ""
    assert metric.startswith(f"metric: recall_all@4: {train}held-out {chosen['cv_mean']:.3f} "
                             f"(3-fold cross-validation by user")
    assert f"the search: {data['cross_validated']:.3f}" in metric and f"gain {data['gain']:+.3f}" in metric
    assert any(line.startswith(f"chosen: {chosen['name']}, cross-validated {chosen['cv_mean']:.3f}")
               for line in header)
    assert any(line.startswith("runner-up: ") for line in header) and any(line.startswith("why: ") for line in header)
    for f in data["folds"]:
        assert (f"  fold {f['fold']} (held out {', '.join(f['held_users'])}): train {f['train']:.3f}, "
                f"held-out {f['held_out']:.3f}") in header
    search = "tpe search, 8 trials per fold, seed 0"
    assert (f"preset: tuned from start ({search})" if chosen["kind"] == "search" else
            f"preset: {chosen['name']}, chosen over the search ({search})") in header


@pytest.mark.parametrize("body, problem", [
    ("lambda = nan\n", "mmr_lambda: must be a finite number, got nan"),
    ("topK = 2.5\n", "top_k: must be a whole number"),
    ("lambda = = 3\n", "not valid TOML"),
])
def test_garbage_under_a_header_is_one_clear_error(tmp_path, body, problem):
    path = tmp_path / "tuned.toml"
    path.write_text("# Exported by memsense-gui on 2026-11-21T15:00:00+00:00\n# metric: recall_all@4: train 0.7\n\n"
                    + body)
    with pytest.raises(MemsenseError) as exc:
        config_io.load(path)
    assert problem in str(exc.value) and str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_nan_in_a_json_export_is_one_clear_error(tmp_path):
    path = tmp_path / "tuned.json"
    path.write_text('{"provenance": {"metric": {"name": "recall_all@4"}}, "alpha": NaN}')
    with pytest.raises(MemsenseError, match=r"alpha: must be a finite number, got nan$"):
        config_io.load(path)
