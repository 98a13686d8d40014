from __future__ import annotations

import math
from dataclasses import replace

import pytest

from core import config as config_io
from core.config import Config
from core.errors import MemsenseError
from core.records import MEMSENSE_ROUTES, SESSION_ROUTES


def test_defaults_are_memsense():
    cfg = Config()
    assert (cfg.rrf_k, cfg.alpha, cfg.mmr_lambda, cfg.duplicate_threshold) == (15, 0.1, 0.78, 0.94)
    assert (cfg.turn_support_cap, cfg.turn_support_factor, cfg.tag_weight, cfg.top_k) == (0.12, 0.6, 0.35, 4)
    assert all(cfg.weight(r) == 1.0 for r in MEMSENSE_ROUTES)
    assert all(cfg.weight(r) == 0.0 for r in SESSION_ROUTES)  # beyond Memsense: off in its own settings


@pytest.mark.parametrize("top_k, candidate, route", [(1, 32, 64), (4, 32, 64), (8, 32, 64), (12, 48, 96), (30, 120, 240)])
def test_limit_formulas(top_k, candidate, route):
    cfg = replace(Config(), top_k=top_k)
    assert cfg.candidate_limit == max(4 * top_k, 32) == candidate
    assert cfg.route_limit == max(2 * candidate, 40) == route


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_round_trip(tmp_path, fmt):
    cfg = replace(Config(), mmr_lambda=0.5, top_k=7, session_first=False).with_weights(lexical=2.5, vec_next_user=0.0)
    path = tmp_path / f"c.{fmt}"
    config_io.save(cfg, path)
    assert config_io.load(path) == cfg
    text = path.read_text()
    assert "duplicateThreshold" in text and "lambda" in text


@pytest.mark.parametrize(
    "change, message",
    [
        ({"lambda": float("nan")}, "mmr_lambda: must be a finite number"),
        ({"routeWeights": {"lexical": -1}}, "route_weights.lexical: -1.0 is below the minimum 0.0 (no negative weights)"),
        ({"alpha": "high"}, "alpha: must be a number"),
        ({"topK": 2.5}, "top_k: must be a whole number"),
        ({"topK": 0}, "top_k: 0 is below the minimum"),
        ({"duplicateThreshold": 1.5}, "duplicate_threshold: 1.5 is above the maximum"),
        ({"routeWeights": {"vec_nope": 1}}, "unknown route(s) vec_nope"),
        ({"bogus": 1}, "bogus: unknown setting"),
        ({"fusion": "magic"}, "scheme: 'magic' is not one of"),
        ({"sessionFirst": "yes"}, "session_first: must be true or false"),
    ],
)
def test_validation_names_each_bad_field(change, message):
    with pytest.raises(MemsenseError) as err:
        config_io.from_dict(change)
    assert message in str(err.value)


def test_several_bad_fields_are_all_named():
    with pytest.raises(MemsenseError) as err:
        config_io.from_dict({"alpha": -1, "lambda": math.inf})
    assert "alpha" in str(err.value) and "mmr_lambda" in str(err.value)


def test_nan_in_toml_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("lambda = nan\n")
    with pytest.raises(MemsenseError, match=r"bad\.toml: invalid config: mmr_lambda: must be a finite number"):
        config_io.load(path)


def test_truncated_json_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"alpha": 0.')
    with pytest.raises(MemsenseError, match="not valid JSON"):
        config_io.load(path)


def test_save_is_atomic_and_keeps_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    config_io.save(Config(), path)
    before = path.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(OSError):
        config_io.save(replace(Config(), alpha=0.3), path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
