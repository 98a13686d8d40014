"""The Qdrant-server store (`--store http(s)://…`): one collection for all users with a tenant
index, exact per-user search, crash-safe re-ingest by generations, stores of the older layout
(one collection per user) still read and converted in place.

No Qdrant server binary can be installed here (no registry ships one), so these tests run
qdrant-client's local mode, which has the server's API; payload indexes and HNSW settings have
no effect there, so the requests that create them are checked as sent.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from qdrant_client import QdrantClient

from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
from core.cli.main import main as cli
from core.errors import MemsenseError
from core.recall.qdrant import store as qdrant
from core.recall.qdrant.store import CHUNKS, META, QdrantStore
from core.records import DENSE_ROUTES
from tests.recall.qdrant_legacy import write_legacy_store
from tests.recall.test_store import by_score_then_row, oracle

pytestmark = pytest.mark.filterwarnings("ignore:Local mode performs exact")  # the server is asked for exact search
URL = "http://127.0.0.1:9/"  # never contacted: `_server` is replaced by a local-mode client


class Spy:
    """A client that records every call it forwards."""

    def __init__(self, client):
        self.client, self.calls = client, []

    def __getattr__(self, name):
        attr = getattr(self.client, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return attr(*args, **kwargs)
        return call


def users_data(sizes: dict[str, int], seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {u: synthetic_user(u, n, rng) for u, n in sizes.items()}


def fill(store: QdrantStore, data: dict) -> None:
    for user, (chunks, vectors) in data.items():
        store.write_user(user, chunks, vectors, RandomEmbedder.key, DIM)


def user_points(store: QdrantStore, user: str) -> int:
    return store.client.count(CHUNKS, count_filter=store._filter(user_id=user)).count


def snapshot(store: QdrantStore, user: str, queries: np.ndarray) -> tuple:
    chunks, vec = store.read_user(user)
    hits = [store.search(user, q, DENSE_ROUTES, 50) for q in queries]
    return chunks, vec, [{r: by_score_then_row(h[r]) for r in DENSE_ROUTES} for h in hits]


def test_one_collection_for_all_users_with_a_tenant_index():
    spy = Spy(QdrantClient(":memory:"))
    store = QdrantStore(URL, client=spy)
    data = users_data({f"u{i}": 6 + i for i in range(5)})
    fill(store, data)
    assert {c.name for c in spy.client.get_collections().collections} == {CHUNKS, META}
    created = [k for name, a, k in spy.calls if name == "create_collection" and a[0] == CHUNKS]
    assert len(created) == 1 and created[0]["hnsw_config"].m == 0 and created[0]["hnsw_config"].payload_m == 16
    indexes = {a[1]: k["field_schema"] for name, a, k in spy.calls if name == "create_payload_index"}
    assert indexes["user_id"].is_tenant is True and indexes["user_id"].type == "keyword"
    assert indexes["generation"].type == "keyword"
    meta = store.meta()
    assert meta.model_key == RandomEmbedder.key and meta.dim == DIM and sorted(meta.users) == sorted(data)
    for user, (chunks, _) in data.items():
        assert user_points(store, user) == len(chunks)
        points, _ = spy.client.scroll(CHUNKS, scroll_filter=store._filter(user_id=user), limit=100)
        assert {p.payload["generation"] for p in points} == {meta.users[user]}
        assert [c.memory_id for c in store.read_user(user)[0]] == sorted(c.memory_id for c in chunks)


def test_search_is_exact_and_sees_one_user():
    store = QdrantStore(URL, client=QdrantClient(":memory:"))
    data = users_data({"a": 150, "b": 40})
    fill(store, data)
    queries = np.random.default_rng(3).standard_normal((3, DIM))
    for user, (chunks, vectors) in data.items():
        order = sorted(range(len(chunks)), key=lambda i: chunks[i].memory_id)
        for q in queries:
            hits = store.search(user, q, DENSE_ROUTES, 60)
            for r in DENSE_ROUTES:
                rows, cos = oracle(vectors[r], order, q, 60)
                assert by_score_then_row(hits[r]) == by_score_then_row(type(hits[r])(np.array(rows), cos)), (user, r)
                assert hits[r].rows.max() < len(chunks)
    with pytest.raises(MemsenseError, match="unknown user 'c'; users in this store: a, b"):
        store.search("c", queries[0], DENSE_ROUTES, 5)


@pytest.mark.parametrize("crash", ["while writing points", "before the switch", "after the switch"])
def test_a_crash_during_re_ingest_never_loses_or_mixes_a_user(crash, monkeypatch):
    store = QdrantStore(URL, client=QdrantClient(":memory:"))
    data = users_data({"a": 150, "b": 30})
    fill(store, data)
    queries = np.random.default_rng(4).standard_normal((2, DIM))
    before = {u: snapshot(store, u, queries) for u in data}
    fresh, fresh_vectors = synthetic_user("a", 140, np.random.default_rng(99))  # two batches of points

    def boom(*args, **kwargs):
        raise KeyboardInterrupt("kill")  # not an Exception: nothing is tidied after it in a real crash

    real_upsert = store.client.upsert
    if crash == "while writing points":
        batches = iter(range(100))
        monkeypatch.setattr(store.client, "upsert", lambda name, *a, **k: boom() if name == CHUNKS and next(batches) == 1
                            else real_upsert(name, *a, **k))
        monkeypatch.setattr(store, "_delete_points", boom)  # the tidying after the failure dies too
    elif crash == "before the switch":
        monkeypatch.setattr(store, "_switch", boom)
        monkeypatch.setattr(store, "_delete_points", boom)
    else:
        monkeypatch.setattr(store, "_delete_points", boom)
    with pytest.raises(KeyboardInterrupt):
        store.write_user("a", fresh, fresh_vectors, RandomEmbedder.key, DIM)
    monkeypatch.undo()
    reopened = QdrantStore(URL, client=store.client)
    chunks, vec, hits = snapshot(reopened, "a", queries)
    if crash == "after the switch":
        assert [c.memory_id for c in chunks] == sorted(c.memory_id for c in fresh)
        assert user_points(reopened, "a") == 150 + 140  # the old generation waits, unread, for the next write
    else:
        assert chunks == before["a"][0] and hits == before["a"][2]
        np.testing.assert_allclose(vec, before["a"][1], atol=1e-6)  # local mode re-normalises stored vectors on a search
        assert user_points(reopened, "a") > 150  # leftovers of the dead write, unread
    assert snapshot(reopened, "b", queries)[0] == before["b"][0]
    reopened.write_user("a", fresh[:50], {r: v[:50] for r, v in fresh_vectors.items()}, RandomEmbedder.key, DIM)
    assert user_points(reopened, "a") == 50 and len(reopened.read_user("a")[0]) == 50
    assert user_points(reopened, "b") == 30


def test_listing_users_reads_the_user_records_only():
    """Opening and listing costs the same few requests for 5 users as for 60, and no chunk is read."""
    counts = {}
    for n in (5, 60):
        spy = Spy(QdrantClient(":memory:"))
        fill(QdrantStore(URL, client=spy), users_data({f"user-{i:03d}": 2 for i in range(n)}))
        spy.calls.clear()
        store = QdrantStore(URL, client=spy)
        assert store.users() == [f"user-{i:03d}" for i in range(n)]
        assert all(a[:1] != (CHUNKS,) for _, a, _ in spy.calls)
        counts[n] = len(spy.calls)
    assert counts[5] == counts[60] <= 4


def test_bad_writes_change_nothing():
    store = QdrantStore(URL, client=QdrantClient(":memory:"))
    data = users_data({"a": 20})
    fill(store, data)
    chunks, vectors = data["a"]
    bad = {r: v.copy() for r, v in vectors.items()}
    bad["vec_asst"][3, 0] = np.nan
    with pytest.raises(MemsenseError, match="not finite"):
        store.write_user("a", chunks, bad, RandomEmbedder.key, DIM)
    with pytest.raises(MemsenseError, match="belongs to user 'a', not 'b'"):
        store.write_user("b", chunks, vectors, RandomEmbedder.key, DIM)
    with pytest.raises(MemsenseError, match="built with model"):
        store.write_user("a", chunks, {r: np.ones((len(chunks), 3)) for r in DENSE_ROUTES}, RandomEmbedder.key, 3)
    assert store.users() == ["a"] and user_points(store, "a") == 20
    store.drop_user("a")
    assert store.users() == [] and store.client.count(CHUNKS).count == 0


def unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def legacy_folder(path, sizes: dict[str, int]) -> dict:
    data = users_data(sizes, seed=5)
    client = QdrantClient(path=str(path))
    try:
        write_legacy_store(client, data, RandomEmbedder.key, DIM)
    finally:
        client.close()
    return data


def test_an_older_store_is_read_then_converted_in_place(tmp_path):
    data = legacy_folder(tmp_path / "old", {"a": 80, "b": 25})
    queries = np.random.default_rng(6).standard_normal((2, DIM))
    store = QdrantStore(tmp_path / "old")
    try:
        assert store.legacy and store.users() == ["a", "b"]
        before = {u: snapshot(store, u, queries) for u in data}
        chunks, vectors = data["a"]
        for act in (lambda: store.write_user("a", chunks, vectors, RandomEmbedder.key, DIM), lambda: store.drop_user("b")):
            with pytest.raises(MemsenseError, match=f"one collection per user .* `memsense migrate {tmp_path / 'old'} "
                                                    f"--store {tmp_path / 'old'}`"):
                act()
        assert store.upgrade() == {"users": 2, "chunks": 105, "model_key": RandomEmbedder.key, "store": str(tmp_path / "old")}
        assert not store.legacy and store.users() == ["a", "b"]
        assert {c.name for c in store.client.get_collections().collections} == {CHUNKS, META}
        for user in data:
            chunks, vec, hits = snapshot(store, user, queries)
            assert chunks == before[user][0] and hits == before[user][2]
            np.testing.assert_allclose(unit(vec), unit(before[user][1]), atol=1e-6)  # local mode may hand back either
        with pytest.raises(MemsenseError, match="already keeps all users in one collection"):
            store.upgrade()
    finally:
        store.close()


def test_an_interrupted_conversion_leaves_the_older_store_readable(tmp_path, monkeypatch):
    data = legacy_folder(tmp_path / "old", {"a": 30, "b": 12})
    store = QdrantStore(tmp_path / "old")
    try:
        before = store.read_user("a")
        monkeypatch.setattr(store, "_set_model", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt("kill")))
        with pytest.raises(KeyboardInterrupt):
            store.upgrade()
        monkeypatch.undo()
        assert store.legacy and store.read_user("a")[0] == before[0]
        store.upgrade()
        assert store.read_user("a")[0] == before[0]
        assert store.client.count(CHUNKS).count == sum(len(c) for c, _ in data.values())  # no copy twice
    finally:
        store.close()


def test_cli_converts_a_server_in_place_and_copies_into_one(tmp_path, monkeypatch, capsys):
    legacy_folder(tmp_path / "old", {"a": 10, "b": 7})
    clients = {"old": lambda: QdrantClient(path=str(tmp_path / "old"))}
    target = Spy(QdrantClient(":memory:"))  # one server: closing a client of it keeps its data
    target.close = lambda: None
    monkeypatch.setattr(qdrant, "_server", lambda url, timeout=None: clients["old"]() if url == URL else target)
    assert cli(["users", "--store", URL, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == ["a", "b"]
    assert cli(["migrate", URL, "--store", URL, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["users"] == 2
    assert not QdrantStore(tmp_path / "old").legacy
    legacy_folder(tmp_path / "old2", {"c": 9})
    assert cli(["migrate", str(tmp_path / "old2"), "--store", "http://127.0.0.1:10/", "--json"]) == 0
    capsys.readouterr()
    assert QdrantStore("http://127.0.0.1:10/", client=target).users() == ["c"]
    assert cli(["migrate", str(tmp_path / "old2"), "--store", "http://127.0.0.1:10/"]) == 1
    assert "already holds users" in capsys.readouterr().err
