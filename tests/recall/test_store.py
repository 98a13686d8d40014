"""The embedded store: exact search against a full-sort oracle, per-user isolation of damage,
read-only stores, crash safety under kill -9, and migration from Qdrant local mode."""
from __future__ import annotations

import json
import os
import warnings
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.recall.backends import open_store
from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
from core.cli.main import main as cli
from core.errors import MemsenseError
from core.recall.qdrant.store import QdrantStore
from core.recall.store import top_rows
from core.records import DENSE_ROUTES
from tests.recall.qdrant_legacy import write_legacy_store

ROOT = Path(__file__).resolve().parents[2]


def make_store(path: Path, users: dict[str, int], seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    data = {}
    store = open_store(path, create=True)
    try:
        for user, n in users.items():
            chunks, vectors = synthetic_user(user, n, rng)
            store.write_user(user, chunks, vectors, RandomEmbedder.key, DIM)
            data[user] = (chunks, vectors)
    finally:
        store.close()
    return data


def oracle(vectors: np.ndarray, order: list[int], query: np.ndarray, limit: int) -> tuple[list[int], np.ndarray]:
    """Full sort of cosine scores (ties by row), chunks without a vector left out."""
    m = vectors[order].astype(np.float64)
    norms = np.linalg.norm(m, axis=1)
    cos = m @ query / np.where(norms > 0, norms, 1) / np.linalg.norm(query)
    rows = sorted((i for i in range(len(m)) if norms[i] > 0), key=lambda i: (-cos[i], i))[:limit]
    return rows, cos[rows]


def test_search_is_exact_against_a_full_sort(tmp_path):
    data = make_store(tmp_path / "s", {"a": 300, "b": 50})
    store = open_store(tmp_path / "s")
    try:
        assert store.users() == ["a", "b"]
        chunks, vectors = data["a"]
        order = sorted(range(len(chunks)), key=lambda i: chunks[i].memory_id)
        read, vec_full = store.read_user("a")
        assert [c.memory_id for c in read] == [chunks[i].memory_id for i in order] and read[5] == chunks[order[5]]
        q = np.random.default_rng(7).standard_normal(DIM)
        for limit in (1, 40, 1000):
            hits = store.search("a", q, DENSE_ROUTES, limit)
            for r in DENSE_ROUTES:
                rows, scores = oracle(vectors[r], order, q, limit)
                assert hits[r].rows.tolist() == rows
                np.testing.assert_allclose(hits[r].scores, scores, atol=1e-6)
        assert len(store.search("b", q, ["vec_full"], 1000)["vec_full"].rows) == 50
    finally:
        store.close()


@pytest.mark.parametrize("seed", range(6))
def test_top_rows_breaks_ties_by_row_even_at_the_cut(seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 5, size=60).astype(float)
    scores[rng.random(60) < 0.2] = -np.inf
    for limit in (1, 7, 30, 60, 100):
        expected = sorted(np.flatnonzero(np.isfinite(scores)), key=lambda i: (-scores[i], i))[:limit]
        assert top_rows(scores, limit).tolist() == expected


def test_store_of_many_users_lists_them_without_reading_them(tmp_path):
    make_store(tmp_path / "s", {f"user{i:04d}": 3 for i in range(300)})
    os.remove(next((tmp_path / "s" / "vectors").glob("user0007-*.npy")))  # listing must not touch vector files
    store = open_store(tmp_path / "s")
    try:
        assert len(store.users()) == 300 and store.users()[0] == "user0000"
        with pytest.raises(MemsenseError, match=r"unknown user 'nobody'; users in this store: user0000, .* \(300 in all\)"):
            store.read_user("nobody")
    finally:
        store.close()


def damage_vectors(store: Path, user: str) -> None:
    f = next((store / "vectors").glob(f"{user}-*.npy"))
    with open(f, "r+b") as fh:
        fh.seek(f.stat().st_size // 2)
        fh.write(os.urandom(64))


def damage_payload(store: Path, user: str) -> None:
    db = sqlite3.connect(store / "memsense.sqlite")
    db.execute("UPDATE chunks SET payload='{\"memory_id\": 5' WHERE user_id=? AND row=1", (user,))
    db.commit()
    db.close()


def test_a_recall_never_returns_what_damaged_vectors_give(tmp_path):
    """The checksum of a user's vectors is computed while its first recall runs (rows read,
    index built, query scanned); the recall waits for it, so it fails, and so does every
    later recall of that user, while other users recall as before."""
    from core.recall.engine import Engine
    make_store(tmp_path / "s", {"a": 40, "b": 200})
    damage_vectors(tmp_path / "s", "b")
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        for _ in range(2):
            with pytest.raises(MemsenseError, match=r"the data of user 'b' .* is damaged .*does not match its checksum"):
                engine.recall("b", "alpha bravo", 40)
        assert engine.recall("a", "alpha bravo", 40).size
    finally:
        engine.close()


@pytest.mark.parametrize("word", [0x7F800001, 0x7F800000], ids=["signalling NaN", "infinity"])
def test_damaged_vectors_give_one_error_and_no_float_warning(tmp_path, word):
    """Seen once in CI: random bytes written into the vectors made the first scan, which runs while
    the checksum is computed, warn "invalid value encountered in matmul" before the error."""
    from core.recall.engine import Engine
    make_store(tmp_path / "s", {"u": 60})
    f = next((tmp_path / "s" / "vectors").glob("u-*.npy"))
    with open(f, "r+b") as fh:
        fh.seek(f.stat().st_size // 2 // 4 * 4)
        fh.write(np.full(64, word, dtype="<u4").tobytes())
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(MemsenseError, match=r"does not match its checksum"):
                engine.recall("u", "alpha bravo", 40)
    finally:
        engine.close()


def delete_vectors(store: Path, user: str) -> None:
    os.remove(next((store / "vectors").glob(f"{user}-*.npy")))


@pytest.mark.parametrize("damage", [damage_vectors, damage_payload, delete_vectors])
def test_damage_to_one_user_stays_with_that_user(tmp_path, capsys, damage):
    store_dir = tmp_path / "s"
    make_store(store_dir, {"a": 40, "b": 40, "c": 40})
    damage(store_dir, "b")
    q = np.ones(DIM)
    store = open_store(store_dir)
    try:
        with pytest.raises(MemsenseError, match=f"the data of user 'b' .* is damaged .* other users are unaffected. "
                                                f"Drop it with `memsense drop --store {store_dir} --user b`"):
            store.read_user("b")
        for user in ("a", "c"):
            assert len(store.read_user(user)[0]) == 40 and len(store.search(user, q, DENSE_ROUTES, 10)["vec_full"].rows) == 10
    finally:
        store.close()
    assert cli(["drop", "--store", str(store_dir), "--user", "b"]) == 0
    assert "dropped user 'b'" in capsys.readouterr().out
    store = open_store(store_dir)
    try:
        assert store.users() == ["a", "c"]
        assert len(list((store_dir / "vectors").glob("*.npy"))) == 2
    finally:
        store.close()


def test_read_only_store_opens_for_reading_and_says_why_it_cannot_write(tmp_path, monkeypatch):
    store_dir = tmp_path / "ro"
    make_store(store_dir, {"a": 30})
    for p in [store_dir, *store_dir.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    if os.geteuid() == 0:  # root writes through file modes: answer os.access as for any other user
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if mode == os.W_OK else real(p, mode))
    try:
        store = open_store(store_dir)
        try:
            assert len(store.read_user("a")[0]) == 30
            assert len(store.search("a", np.ones(DIM), ["vec_full"], 5)["vec_full"].rows) == 5
            with pytest.raises(MemsenseError, match=f"the store {store_dir} is read-only; make it writable"):
                store.drop_user("a")
        finally:
            store.close()
        with pytest.raises(MemsenseError, match=f"the store {store_dir} is read-only \\(no write permission .* can be searched"):
            open_store(store_dir, write=True)
    finally:
        for p in [store_dir, *store_dir.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


WRITER = """
import sys, numpy as np
from core.recall.backends import open_store
from core.cli.bench_scale import synthetic_user, DIM, RandomEmbedder
store = open_store(sys.argv[1], create=True)
rng = np.random.default_rng(3)
for i in range(10_000):
    chunks, vectors = synthetic_user(f"u{i:05d}", 200, rng)
    store.write_user(f"u{i:05d}", chunks, vectors, RandomEmbedder.key, DIM)
    print(f"u{i:05d}", flush=True)
"""


def test_kill_9_during_ingest_loses_nothing_already_stored(tmp_path):
    store_dir = tmp_path / "s"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store_dir)], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    stored = [writer.stdout.readline().strip() for _ in range(6)]
    os.kill(writer.pid, signal.SIGKILL)  # most likely in the middle of writing the seventh user
    writer.wait()
    store = open_store(store_dir, write=True)  # a writer clears what the killed one left half-written
    try:
        users = store.users()
        assert set(stored) <= set(users) and len(users) <= len(stored) + 1
        for u in users:
            assert len(store.read_user(u)[0]) == 200
            assert len(store.search(u, np.ones(DIM), DENSE_ROUTES, 5)["vec_full"].rows) == 5
        assert len(list((store_dir / "vectors").glob("*.npy"))) == len(users)
    finally:
        store.close()


def test_cancel_or_bad_vectors_leave_the_user_as_it_was(tmp_path):
    data = make_store(tmp_path / "s", {"a": 30})
    chunks, vectors = data["a"]
    store = open_store(tmp_path / "s", write=True)
    try:
        with pytest.raises(MemsenseError, match="cancelled"):
            store.write_user("a", chunks[:5], {r: v[:5] for r, v in vectors.items()}, RandomEmbedder.key, DIM,
                             cancelled=lambda: True)
        bad = {r: v.copy() for r, v in vectors.items()}
        bad["vec_asst"][3, 0] = np.nan
        with pytest.raises(MemsenseError, match="not finite"):
            store.write_user("a", chunks, bad, RandomEmbedder.key, DIM)
        with pytest.raises(MemsenseError, match="built with model"):
            store.write_user("b", chunks, vectors, "another-model", DIM)
        assert len(store.read_user("a")[0]) == 30
    finally:
        store.close()


def test_empty_store_location_and_foreign_folder(tmp_path):
    with pytest.raises(MemsenseError, match="--store is empty"):
        open_store("  ")
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "notes.txt").write_text("mine")
    with pytest.raises(MemsenseError, match="not empty and holds no memsense store"):
        open_store(tmp_path / "stuff", create=True)
    with pytest.raises(MemsenseError, match="no memory store at"):
        open_store(tmp_path / "stuff")


# -- migration from Qdrant local mode (the store format of earlier memsense) -----------------------
def make_local_mode_store(path: Path, users: dict[str, int]) -> dict:
    """A store as memsense wrote it in Qdrant local mode: one collection per user (tests.recall.qdrant_legacy)."""
    from qdrant_client import QdrantClient

    rng = np.random.default_rng(11)
    data = {}
    for user, n in users.items():
        chunks, vectors = synthetic_user(user, n, rng)
        for r in ("facet_events", "facet_preferences"):  # a session's turns share a facet vector: ties
            for i in range(0, n, 10):
                vectors[r][i:i + 10] = vectors[r][i]
        data[user] = (chunks, vectors)
    client = QdrantClient(path=str(path))
    try:
        write_legacy_store(client, data, RandomEmbedder.key, DIM)
    finally:
        client.close()
    return {user: chunks for user, (chunks, _) in data.items()}


def by_score_then_row(hits) -> list[int]:
    """Rows in score order with ties by row, scores equal to 1e-6 counting as ties: local mode scores
    identical vectors with float noise in the last digits (SPEC §2: ties break by chunk id)."""
    return [r for _, r in sorted(zip(np.round(hits.scores, 6).tolist(), hits.rows.tolist()), key=lambda h: (-h[0], h[1]))]


def test_migrate_a_local_mode_store_searches_identically(tmp_path, capsys):
    old, new = tmp_path / "old", tmp_path / "new"
    make_local_mode_store(old, {"a": 120, "b": 35})
    with pytest.raises(MemsenseError, match=r"store of an older memsense .* `memsense migrate"):
        open_store(old)
    queries = np.random.default_rng(5).standard_normal((4, DIM))
    before = QdrantStore(old)
    try:
        expected = {u: (before.read_user(u), [before.search(u, q, DENSE_ROUTES, 100) for q in queries]) for u in before.users()}
    finally:
        before.close()
    assert cli(["migrate", str(old), "--store", str(new), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["users"] == 2
    after = open_store(new)
    try:
        assert after.users() == sorted(expected)
        for user, ((chunks, vec_full), hits) in expected.items():
            got_chunks, got_vec = after.read_user(user)
            assert got_chunks == chunks
            np.testing.assert_allclose(got_vec, vec_full / np.linalg.norm(vec_full, axis=1, keepdims=True), atol=1e-6)
            for q, old_hits in zip(queries, hits):
                new_hits = after.search(user, q, DENSE_ROUTES, 100)
                for r in DENSE_ROUTES:
                    assert by_score_then_row(new_hits[r]) == by_score_then_row(old_hits[r]), (user, r)
                    np.testing.assert_allclose(np.sort(new_hits[r].scores), np.sort(old_hits[r].scores), atol=1e-6)
    finally:
        after.close()
    assert cli(["migrate", str(old), "--store", str(new)]) == 1
    assert "already holds users" in capsys.readouterr().err


def test_migrate_refuses_what_it_cannot_convert(tmp_path, capsys):
    make_store(tmp_path / "emb", {"a": 5})
    for argv, message in ((["migrate", str(tmp_path / "emb"), "--store", str(tmp_path / "x")], "already an embedded store"),
                          (["migrate", str(tmp_path / "none"), "--store", str(tmp_path / "x")], "no Qdrant local-mode store")):
        assert cli(argv) == 1
        assert message in capsys.readouterr().err
    shutil.rmtree(tmp_path / "emb")
