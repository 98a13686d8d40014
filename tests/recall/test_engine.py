"""The engine end to end on the demo store: ingest, recall, search, explain, and bad input."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import replace

import numpy as np
import pytest

from tests.fixtures import run_cli
from core.config import Config
from core.recall.engine import DEMO_DATASET, Engine, build_store
from core.errors import MemsenseError
from core.rank.rerank import rerank
from core.search import search

pytestmark = pytest.mark.slow


def test_demo_store_has_every_user(demo_engine):
    assert demo_engine.users() == ["demo-ana", "demo-ben", "demo-chloe"] or len(demo_engine.users()) >= 3
    chunks = demo_engine.chunks(demo_engine.users()[0])
    assert [c.memory_id for c in chunks] == sorted(c.memory_id for c in chunks)
    assert {c.kind for c in chunks} == {"session", "turn"}


def test_reingest_uses_the_cache_and_keeps_other_users(tmp_path, model_cache):
    store = tmp_path / "s"
    first = build_store(DEMO_DATASET, store, cache_dir=model_cache)
    again = build_store(DEMO_DATASET, store, cache_dir=model_cache)
    assert again.texts_embedded == 0 and again.texts_from_cache > 0
    assert (again.session_chunks, again.turn_chunks) == (first.session_chunks, first.turn_chunks)
    e = Engine(store, cache_dir=model_cache)
    try:
        assert len(e.users()) == first.users
        assert sum(len(e.chunks(u)) for u in e.users()) == first.session_chunks + first.turn_chunks
    finally:
        e.close()


def test_search_results_are_sessions_with_explain(demo_engine):
    user = demo_engine.users()[0]
    ranking = search(demo_engine, user, "Which races did Ana run?", Config())
    assert 1 <= len(ranking.results) <= 4 and ranking.session_first
    for r in ranking.results:
        assert r["memory_id"].split(":")[-1].startswith("P")
        ex = r["explain"]
        for key in ("rrf_score", "memory_score", "alpha", "routes", "diversity", "session_first",
                    "session_rrf_score", "turn_support", "supporting_turn_count", "best_turn_routes",
                    "route_hits", "mmr"):
            assert key in ex
        assert r["final_score"] == round(r["rrf_score"] + 0.1 * ex["memory_score"], 6)


@pytest.mark.parametrize("change", [dict(top_k=12), dict(rrf_k=60.0), dict(mmr_lambda=0.3), dict(session_first=False),
                                    dict(duplicate_threshold=0.5), dict(candidate_min=8)])
def test_rerank_of_cached_recall_equals_fresh_search(demo_engine, change):
    user = demo_engine.users()[1]
    query = "what did they cook together"
    pool = demo_engine.recall(user, query)
    cfg = replace(Config(), **change).with_weights(lexical=2.0)
    cached = rerank(pool, cfg)
    fresh = search(demo_engine, user, query, cfg)
    assert cached.result_ids == fresh.result_ids
    assert [r["final_score"] for r in cached.results] == [r["final_score"] for r in fresh.results]


def test_recall_keeps_route_lists_and_touched_sessions(demo_engine):
    user = demo_engine.users()[0]
    pool = demo_engine.recall(user, "bees")
    found = pool.ranks > 0
    assert found[:, 4].any()  # lexical route matched "bees"
    sessions_touched = {c.session_id for c, f in zip(pool.chunks, found.any(axis=1)) if f}
    session_chunks = {c.session_id for c in pool.chunks if c.kind == "session"}
    assert sessions_touched <= session_chunks
    for j in range(8):
        ranks = sorted(pool.ranks[found[:, j], j])
        assert ranks == list(range(1, len(ranks) + 1))
    assert np.allclose(np.linalg.norm(pool.vectors[np.abs(pool.vectors).sum(1) > 0], axis=1), 1)


def test_unknown_user_empty_and_huge_query(demo_engine):
    with pytest.raises(MemsenseError, match="unknown user 'nobody'; users in this store"):
        search(demo_engine, "nobody", "hi")
    with pytest.raises(MemsenseError, match="the query is empty"):
        search(demo_engine, demo_engine.users()[0], "   ")
    huge = ("bees honey garden " * 6000)[:100_000]
    assert len(search(demo_engine, demo_engine.users()[0], huge).results) > 0
    with pytest.raises(MemsenseError, match="the limit is 100,000"):
        search(demo_engine, demo_engine.users()[0], huge + "x")


def hold_store(store, write: bool) -> subprocess.Popen:
    code = ("import sys, time; from core.recall.backends import open_store; s = open_store(sys.argv[1], write=sys.argv[2] == 'w'); "
            "print('open', flush=True); time.sleep(30)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(store), "w" if write else "r"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "open"
    return holder


def test_store_open_in_another_process(tmp_path, model_cache):
    """One writer, or readers in any number of processes; never both."""
    demo_store = tmp_path / "s"
    build_store(DEMO_DATASET, demo_store, cache_dir=model_cache)
    writer = hold_store(demo_store, write=True)
    try:
        with pytest.raises(MemsenseError, match="open in another process"):
            Engine(demo_store, cache_dir=model_cache)
    finally:
        writer.kill()
        writer.wait()
    reader = hold_store(demo_store, write=False)
    try:
        e = Engine(demo_store, cache_dir=model_cache)  # a second reader is fine
        e.close()
        with pytest.raises(MemsenseError, match="open in another process"):
            build_store(DEMO_DATASET, demo_store, cache_dir=model_cache)
    finally:
        reader.kill()
        reader.wait()


def test_missing_model_folder(demo_store, tmp_path):
    with pytest.raises(MemsenseError, match=r"model folder .* does not exist"):
        Engine(demo_store, model=str(tmp_path / "no-model"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(MemsenseError, match="not a sentence-transformers model folder"):
        build_store(DEMO_DATASET, tmp_path / "s", model=str(tmp_path / "empty"))


def test_missing_store(tmp_path):
    with pytest.raises(MemsenseError, match="no memory store at"):
        Engine(tmp_path / "nowhere")


def test_bad_dataset_leaves_store_intact(tmp_path, model_cache):
    store = tmp_path / "s"
    build_store(DEMO_DATASET, store, cache_dir=model_cache)
    bad = tmp_path / "bad.json"
    bad.write_text(DEMO_DATASET.read_text()[:5000].replace("\n", " ")[:-20])
    with pytest.raises(MemsenseError):
        build_store(bad, store, cache_dir=model_cache)
    cancel = threading.Event()
    cancel.set()
    other = tmp_path / "other.jsonl"
    other.write_text(DEMO_DATASET.read_text().replace("Ana", "Anna"))  # new texts: embedding must run
    with pytest.raises(MemsenseError, match="cancelled"):
        build_store(other, store, cache_dir=model_cache, cancel=cancel)
    e = Engine(store, cache_dir=model_cache)
    try:
        assert len(e.users()) == 3 and search(e, e.users()[0], "bees").results
    finally:
        e.close()


# -- CLI -----------------------------------------------------------------------------------------------


def test_cli_search_explain_json(capsys, demo_store, model_cache, demo_engine):
    user = demo_engine.users()[0]
    common = ["--store", str(demo_store), "--cache", str(model_cache), "--user", user]
    demo_engine.close()  # the CLI opens the store itself
    try:
        code, out, _ = run_cli(capsys, "search", *common, "bees", "--json", "--top-k", "3")
        assert code == 0
        data = json.loads(out)
        assert len(data["results"]) <= 3 and data["pool"]
        assert {p["fate"] for p in data["pool"]} >= {"selected"}
        target = data["pool"][-1]["memory_id"]
        code, out, _ = run_cli(capsys, "explain", *common, "bees", "--memory", target, "--json")
        assert code == 0 and json.loads(out)["status"] == data["pool"][-1]["fate"]
        code, out, err = run_cli(capsys, "explain", *common, "bees", "--memory", "nope")
        assert code == 1 and err.startswith("memsense: error: no chunk 'nope'") and "Traceback" not in err
    finally:
        demo_engine.__init__(demo_store, cache_dir=model_cache)


def test_cli_errors_are_one_line(capsys, tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("alpha = nan\n")
    cases = tmp_path / "cases.json"
    cases.write_text('[{"name": "a", "rows": []}]')
    code, _, err = run_cli(capsys, "rerank", str(cases), "--config", str(bad))
    assert code == 1 and err.count("\n") == 1 and "alpha: must be a finite number" in err
    code, _, err = run_cli(capsys, "ingest", str(tmp_path / "missing.json"), "--store", str(tmp_path / "s"), "--json")
    assert code == 1 and err.count("\n") == 1


def test_cli_ingest_json_reports_counts(capsys, tmp_path, model_cache):
    code, out, _ = run_cli(capsys, "ingest", str(DEMO_DATASET), "--store", str(tmp_path / "s"), "--cache",
                       str(model_cache), "--json", "--mode", "session")
    stats = json.loads(out)
    assert code == 0 and stats["turn_chunks"] == 0 and stats["session_chunks"] > 0
    assert set(stats) == {"users", "session_chunks", "turn_chunks", "texts_embedded", "texts_from_cache", "seconds",
                          "questions_attached"}
    assert stats["questions_attached"] == 35  # the demo conversations come with the demo questions (issue 35)


def test_cli_rerank_replays_cases(capsys, tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"name": "one", "top_k": 1, "options": {"alpha": 0.2}, "rows": [
        {"memory_id": "a", "rrf_score": 0.1, "score": 1.0, "embedding": None, "tags": [], "routes": []}]}))
    code, out, _ = run_cli(capsys, "rerank", str(cases), "--json")
    assert code == 0
    assert json.loads(out) == [{"name": "one", "results": [json.loads(out)[0]["results"][0]]}]
    assert json.loads(out)[0]["results"][0]["final_score"] == 0.3
