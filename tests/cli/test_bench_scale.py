"""`memsense bench --scale`: one JSON object per size, the floor measured in the same run."""
from __future__ import annotations

import json

import pytest

from core.cli.main import main as cli
from core.config import MAX_ROUTE_DEPTH, Config


def test_bench_scale_json_has_one_object_per_size(capsys):
    assert cli(["bench", "--scale", "300,700", "--users", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["chunks"] for r in rows] == [300, 700] and all(r["users"] == 3 for r in rows)
    for r in rows:
        for key in ("open_s", "first_recall_ms", "recall_median_ms", "recall_p95_ms", "floor_ms", "rerank_top4_ms",
                    "rerank_top50_ms", "deepen_max_median_ms", "deepen_max_p95_ms", "recall_no_embed_median_ms",
                    "recall_no_embed_p95_ms", "floor_after_recall_ms", "scan_median_ms"):
            assert r[key] > 0, key
        assert r["depth"] == Config().route_limit and r["max_depth"] == MAX_ROUTE_DEPTH
        assert r["pool_rows"] < r["chunks"]  # recall keeps what the default settings need...
        assert r["max_pool_rows"] == r["chunks"]  # ...and lists as deep as the controls allow cover a small user whole
        assert r["recall_no_embed_median_ms"] < r["recall_median_ms"]  # the stand-in embedder's time left out
        assert r["ratio"] == pytest.approx(r["recall_no_embed_median_ms"] / r["floor_ms"], rel=0.05, abs=0.01)
        assert r["ratio_after_recall"] == pytest.approx(r["recall_no_embed_median_ms"] / r["floor_after_recall_ms"],
                                                        rel=0.05, abs=0.01)


def test_bench_scale_rejects_bad_sizes(capsys):
    assert cli(["bench", "--scale", "1e4,x"]) == 2
    assert "give chunk counts separated by commas" in capsys.readouterr().err


def test_bench_scale_runs_without_proc_or_a_load_average(monkeypatch, tmp_path, capsys):
    """macOS has no /proc, Windows no os.getloadavg: the figures still come, the load average as null.
    (psutil, which asks each platform its own way, still reads /proc here on Linux.)"""
    import builtins
    import os
    import sys

    real_open = builtins.open

    def no_proc(file, *args, **kwargs):
        if str(file).startswith("/proc") and not sys._getframe(1).f_globals.get("__name__", "").startswith("psutil"):
            raise FileNotFoundError(2, "No such file or directory", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_proc)
    monkeypatch.delattr(os, "getloadavg")
    out = tmp_path / "bench.json"
    assert cli(["bench", "--scale", "300", "--json", "--out", str(out)]) == 0, capsys.readouterr().err
    figures = json.loads(out.read_text())
    assert figures["load_average_before_after"] == [None, None]
    assert figures["scale"][0]["rss_mb"] > 0
