"""A user's saved columns (`core.recall.user_index`): what opening a user reads instead of decoding
and tokenising every chunk, and the lazily decoded chunks behind it."""
from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pytest

from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
from core.cli.main import main as cli
from core.errors import MemsenseError
from core.recall.backends import open_store
from core.recall.embedded.store import EmbeddedStore, columns_file
from core.recall.engine import Engine
from core.recall.lexical.bm25 import LexicalIndex
from core.recall.pool import neighbors_of
from core.recall.user_index import LazyChunks, UserColumns, UserIndex

QUERIES = ("alpha bravo", "charlie delta echo", "zulu", "nothing-matches-this", "bravo bravo alpha")


def make_store(path: Path, users: dict[str, int], seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    store = open_store(path, create=True)
    data = {}
    try:
        for user, n in users.items():
            chunks, vectors = synthetic_user(user, n, rng)
            store.write_user(user, chunks, vectors, RandomEmbedder.key, DIM)
            data[user] = sorted(chunks, key=lambda c: c.memory_id)
    finally:
        store.close()
    return data


def columns_path(store: Path, user: str) -> Path:
    db = sqlite3.connect(store / "memsense.sqlite")
    (file,) = db.execute("SELECT file FROM users WHERE user_id=?", (user,)).fetchone()
    db.close()
    return store / "vectors" / columns_file(file)


def recall_fails(store: Path, match: str, depth: int = 40) -> None:
    """A recall of user 'u' in `store` raises one `MemsenseError` matching `match`."""
    engine = Engine(store, embedder=RandomEmbedder())
    try:
        with pytest.raises(MemsenseError, match=match):
            engine.recall("u", "alpha", depth)
    finally:
        engine.close()


def pools_of(store: Path, user: str) -> list:
    engine = Engine(store, embedder=RandomEmbedder())
    try:
        return [engine.recall(user, q, 300) for q in QUERIES]
    finally:
        engine.close()


def same_pool(a, b) -> None:
    assert [c.memory_id for c in a.chunks] == [c.memory_id for c in b.chunks]
    assert np.array_equal(a.ranks, b.ranks)
    assert np.array_equal(a.scores, b.scores, equal_nan=True)
    assert dict(a.neighbors) == dict(b.neighbors)
    assert np.array_equal(a.arrays.session_of, b.arrays.session_of) and np.array_equal(a.arrays.is_turn, b.arrays.is_turn)


def test_the_lexical_index_survives_its_arrays_bit_for_bit():
    texts = ["The cat sat", "", "cat CAT dog\x00dog", "naïve café über", "a " * 50, "\ud800 lone surrogate"]
    ix = LexicalIndex(texts)
    again = LexicalIndex.from_arrays(ix.arrays())
    assert again.vocab == ix.vocab and again.size == len(texts)
    for q in ("cat", "dog cat cat", "café", "surrogate", "absent", ""):
        assert np.array_equal(again.scores(q), ix.scores(q))  # test_lexical.py holds both to rank-bm25
    assert again.scores("cat")[0] > 0 and again.scores("surrogate")[5] > 0
    broken = ix.arrays()
    broken["indptr"] = broken["indptr"][:-1]
    with pytest.raises(ValueError, match="do not fit together"):
        LexicalIndex.from_arrays(broken)


def test_columns_are_what_the_chunks_give(tmp_path):
    chunks = make_store(tmp_path / "s", {"u": 57})["u"]
    saved = UserColumns.load(columns_path(tmp_path / "s", "u"), len(chunks))
    fresh = UserColumns.from_chunks(chunks)
    for field in ("session_of", "is_session", "is_turn", "memory_score", "previous", "following"):
        assert np.array_equal(getattr(saved, field), getattr(fresh, field)), field
    ids = [c.memory_id for c in chunks]
    rebuilt = {ids[i]: (ids[p] if p >= 0 else None, ids[f] if f >= 0 else None)
               for i, (p, f) in enumerate(zip(saved.previous, saved.following))}
    assert rebuilt == neighbors_of(chunks)
    for q in QUERIES:
        assert np.array_equal(saved.bm25.scores(q), LexicalIndex([c.lexical_text for c in chunks]).scores(q))
    with pytest.raises(ValueError, match="not for 58 chunks"):
        UserColumns.load(columns_path(tmp_path / "s", "u"), 58)


def test_a_store_with_columns_recalls_exactly_as_one_without(tmp_path):
    make_store(tmp_path / "s", {"u": 240, "v": 31})
    with_columns = pools_of(tmp_path / "s", "u")
    for user in ("u", "v"):
        columns_path(tmp_path / "s", user).unlink()  # a store written before columns files
    without = pools_of(tmp_path / "s", "u")
    for a, b in zip(with_columns, without):
        same_pool(a, b)


def test_the_engine_says_how_a_user_that_opened_slowly_opens_faster(tmp_path):
    store = tmp_path / "s"
    make_store(store, {"u": 40, "v": 20})
    columns_path(store, "u").unlink()
    engine = Engine(store, embedder=RandomEmbedder())
    try:
        engine.recall("u", "alpha", 40)
        engine.recall("v", "alpha", 40)
        assert engine.note("u") == (f"user 'u' has no columns file (an older store), so it opens slowly; "
                                    f"`memsense migrate {store} --store {store}` writes it")
        assert engine.note("v") == ""
    finally:
        engine.close()


def test_opening_a_user_decodes_only_the_chunks_a_pool_holds(tmp_path):
    make_store(tmp_path / "s", {"u": 400})
    store = EmbeddedStore(tmp_path / "s")
    try:
        chunks, _, columns = store.read_indexed("u")
        assert columns is not None and isinstance(chunks, LazyChunks)
        index = UserIndex.build(chunks, store.read_user("u")[1], "bm25", columns, chunks.memory_ids)
        assert sum(c is not None for c in chunks._chunks) == 0
        assert "u:S00001:T002" in index.by_id and index.by_id["u:S00001:T002"].memory_id == "u:S00001:T002"
        assert sum(c is not None for c in chunks._chunks) == 1
        assert [c.memory_id for c in chunks] == chunks.memory_ids  # iterating decodes the rest
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["flip", "truncate", "other-user"])
def test_a_damaged_columns_file_is_rebuilt_from_the_rows_with_a_warning(tmp_path, damage):
    make_store(tmp_path / "s", {"u": 120, "v": 60})
    good = pools_of(tmp_path / "s", "u")
    path = columns_path(tmp_path / "s", "u")
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(bytes(data[: len(data) // 3]))
    else:
        path.write_bytes(columns_path(tmp_path / "s", "v").read_bytes())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        damaged = pools_of(tmp_path / "s", "u")
    assert any("indexed from their rows instead" in str(w.message) for w in caught)
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine.recall("u", "alpha", 40)
        assert engine.note("u").startswith(str(path)) and "memsense migrate" in engine.note("u")
    finally:
        engine.close()
    for a, b in zip(good, damaged):
        same_pool(a, b)


def test_a_damaged_payload_is_an_error_of_the_recall_that_reads_it(tmp_path):
    make_store(tmp_path / "s", {"u": 30})
    db = sqlite3.connect(tmp_path / "s" / "memsense.sqlite")
    db.execute("UPDATE chunks SET payload='{\"memory_id\": 5' WHERE user_id='u'")
    db.commit()
    db.close()
    recall_fails(tmp_path / "s", r"the data of user 'u' .* is damaged")


def test_migrate_in_place_adds_the_columns_an_older_store_lacks(tmp_path, capsys):
    store = tmp_path / "s"
    make_store(store, {"u": 50, "v": 20})
    columns_path(store, "u").unlink()
    (store / "vectors" / "v-0123456789ab.columns.npz.part").write_bytes(b"half")  # a crash mid-write
    (store / "vectors" / "notes.txt").write_text("not memsense's: left alone")
    assert cli(["migrate", str(store), "--store", str(store)]) == 0
    assert "wrote the columns files of 1 of 2 users (1 had them)" in capsys.readouterr().out
    assert columns_path(store, "u").exists() and not (store / "vectors" / "v-0123456789ab.columns.npz.part").exists()
    assert (store / "vectors" / "notes.txt").exists()
    assert cli(["migrate", str(store), "--store", str(store)]) == 0
    assert "wrote the columns files of 0 of 2 users" in capsys.readouterr().out
    assert cli(["migrate", str(store), "--store", str(tmp_path / "elsewhere")]) == 1
    assert f"run `memsense migrate {store} --store {store}`" in capsys.readouterr().err


def test_rewriting_a_user_leaves_no_columns_file_behind(tmp_path):
    make_store(tmp_path / "s", {"u": 25})
    make_store(tmp_path / "s", {"u": 25}, seed=1)
    files = sorted(p.name for p in (tmp_path / "s" / "vectors").iterdir())
    assert len(files) == 2 and files[0].endswith(".columns.npz") and files[1].endswith(".npy")
    assert files[0].removesuffix(".columns.npz") == files[1].removesuffix(".npy")


def test_chunks_that_share_a_memory_id_open_as_before(tmp_path):
    from dataclasses import replace

    chunks, vectors = synthetic_user("u", 12, np.random.default_rng(3))
    chunks[5] = replace(chunks[5], memory_id=chunks[4].memory_id)  # a dataset may repeat an id
    store = open_store(tmp_path / "s", create=True)
    store.write_user("u", chunks, vectors, RandomEmbedder.key, DIM)
    store.close()
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        assert len(engine.chunks("u")) == 12
        assert engine.recall("u", "alpha", 40).size > 0
    finally:
        engine.close()


def set_payload(store: Path, user: str, row: int, edit) -> None:
    db = sqlite3.connect(store / "memsense.sqlite")
    (payload,) = db.execute("SELECT payload FROM chunks WHERE user_id=? AND row=?", (user, row)).fetchone()
    db.execute("UPDATE chunks SET payload=? WHERE user_id=? AND row=?", (edit(payload), user, row))
    db.commit()
    db.close()


def test_a_recall_checks_its_pool_rows_and_decodes_them_when_used(tmp_path):
    data = make_store(tmp_path / "s", {"u": 300})
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        pool = engine.recall("u", "alpha bravo", 40)
        lazy = engine._index("u").chunks
        rows = pool.chunks.rows.tolist()
        turns = [r for r in rows if data["u"][r].kind == "turn"]  # session chunks were read for the session routes' index
        assert turns and lazy._seen[rows].all() and all(lazy._chunks[r] is None for r in turns)  # checked, not decoded
        assert list(pool.chunks) == [data["u"][r] for r in rows]  # decoded on use: the chunks written
    finally:
        engine.close()


def test_a_payload_holding_another_rows_id_is_an_error_of_the_recall(tmp_path):
    make_store(tmp_path / "s", {"u": 30})
    for row in range(30):
        set_payload(tmp_path / "s", "u", row, lambda p: p.replace('"u:S', '"u:X', 1))
    recall_fails(tmp_path / "s", r"the data of user 'u' .* is damaged .*does not match its row")


def test_a_payload_simdjson_refuses_but_python_reads_recalls_as_before(tmp_path):
    """NaN is not JSON (simdjson refuses it), but Python's json reads it: the check then decodes
    the rows, finds them sound, and the recall goes on."""
    make_store(tmp_path / "s", {"u": 30})
    for row in range(30):
        set_payload(tmp_path / "s", "u", row, lambda p: p[:-1] + ', "memory_score": NaN}')
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        pool = engine.recall("u", "alpha", 40)
        assert pool.size and all(np.isnan(c.memory_score) for c in pool.chunks)
    finally:
        engine.close()
