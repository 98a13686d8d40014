"""History: every eval, compare, tune, diagnose and fix run is kept beside the store, across
processes; two runs compare question by question; a run's settings write out and load again."""
from __future__ import annotations

import json

import pytest

from core import config as config_io
from core.config.presets import builtin
from core.evaluation.history import History, history_path
from core.recall.engine import DEMO_QUESTIONS
from tests.fixtures import run_cli


@pytest.mark.slow
def test_runs_are_kept_and_compared(capsys, tmp_path, demo_store, model_cache):
    common = ["--store", demo_store, "--cache", model_cache, "--quiet"]
    before = len(History(history_path(demo_store)).runs())
    assert run_cli(capsys, "eval", DEMO_QUESTIONS, *common, "--preset", "memsense", "--preset", "bm25_only")[0] == 0
    code, out, err = run_cli(capsys, "compare", DEMO_QUESTIONS, *common, "--a", "memsense", "--b", "bm25_only",
                             "--all", "--json")
    assert code == 0, err
    compared = json.loads(out)
    assert run_cli(capsys, "diagnose", DEMO_QUESTIONS, *common)[0] == 0

    code, out, err = run_cli(capsys, "history", "--store", demo_store, "--json")
    assert code == 0, err
    runs = json.loads(out)["runs"][before:]
    assert [r["kind"] for r in runs] == ["eval", "compare", "diagnose"]
    assert runs[0]["configs"] == ["memsense", "bm25_only"] and runs[0]["questions"] == compared["questions"]
    assert all(len(r["dataset_sha256"]) == 64 and r["model"] != "unknown" for r in runs)

    ev, cmp_run = runs[0]["id"], runs[1]["id"]
    code, out, err = run_cli(capsys, "history", "--store", demo_store, "--compare", ev, cmp_run,
                             "--config-a", "memsense", "--config-b", "bm25_only", "--json")
    assert code == 0, err
    diff = json.loads(out)
    wanted = {r["question_id"]: r["diff"] for r in compared["differences"] if r["diff"] != 0}
    assert {d["question_id"]: d["diff"] for d in diff["differences"]} == pytest.approx(wanted)
    assert diff["wins"] == compared["metrics"]["recall_all@4"]["wins"]

    out_file = tmp_path / "reopened.toml"
    code, _, err = run_cli(capsys, "history", "--store", demo_store, "--export", ev, "--config-a", "bm25_only",
                           "--out", out_file)
    assert code == 0, err
    assert config_io.load(out_file) == builtin("bm25_only")


def test_history_errors(capsys, tmp_path):
    store = tmp_path / "nothing-here"
    code, _, err = run_cli(capsys, "history", "--store", store)
    assert code == 1 and "no history at" in err and "Traceback" not in err
    path = history_path(store)
    path.write_bytes(b"this is not a database, just bytes" * 100)
    code, _, err = run_cli(capsys, "history", "--store", store)
    assert code == 1 and "move the file aside" in err


def test_history_of_a_url_keeps_no_password(tmp_path):
    path = history_path("postgresql://u:secret@db.example:5432/memsense", data_dir=tmp_path)
    assert path.parent == tmp_path / "history" and "secret" not in str(path)
    from core.evaluation.history import store_label as _store_label

    assert _store_label("postgresql://u:secret@db.example:5432/memsense?password=x") == "postgresql://db.example:5432/memsense"


def test_the_history_of_a_url_lives_in_the_apps_data_folder(tmp_path, monkeypatch):
    """$MEMSENSE_GUI_HOME, else platformdirs' data folder (core.machine.data_dir), as every other file of the app."""
    from core import machine

    url = "http://qdrant.example:6333"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(machine.HOME_ENV, str(tmp_path / "home"))
    assert history_path(url).parent == tmp_path / "home" / "history"
    monkeypatch.delenv(machine.HOME_ENV)
    assert history_path(url).parent == machine.data_dir() / "history"
    legacy = tmp_path / "xdg" / "memsense" / "history" / history_path(url).name
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"")
    assert history_path(url) == legacy  # a history kept before still opens


def _keep_runs(path, n: int) -> None:
    from core.config import Config

    with History(path) as history:
        for i in range(n):
            history.add("eval", "s", "m", str(DEMO_QUESTIONS), {"c": Config()}, {}, {"c": {f"q{i}": {"mrr": 1.0}}})


def test_two_processes_keeping_runs_at_the_same_moment_lose_none(tmp_path):
    """Issue 39: the app and a command (here two processes) recording into one history at once."""
    import multiprocessing

    path = tmp_path / "store.history.sqlite"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_keep_runs, args=(path, 25)) for _ in range(2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(120)
    assert [w.exitcode for w in writers] == [0, 0]
    with History(path, create=False) as history:
        runs = history.runs()
    assert len(runs) == 50 and len({r.id for r in runs}) == 50
