"""The embedded store's formats: `memsense-store-2` (XXH3-64 vector checksums, columns files that
hold the rows' ids, route masks and the session documents' BM25) and the older ones it still
opens without writing into them: `memsense-store-1` (Adler-32) and columns format 1."""
from __future__ import annotations

import hashlib
import sqlite3
import threading
import zlib
from pathlib import Path

import numpy as np
import pytest
import xxhash

from core.errors import MemsenseError
from core.recall.embedded.payloads import PayloadReader
from core.recall.embedded.store import FORMAT, EmbeddedStore
from core.recall.engine import Engine
from core.cli.bench_scale import RandomEmbedder
from core.recall.user_index import UserColumns
from tests.recall.test_store import damage_vectors
from tests.recall.test_user_index import QUERIES, columns_path, make_store, pools_of, recall_fails, same_pool


def vector_file(store: Path, user: str) -> Path:
    return next((store / "vectors").glob(f"{user}-*.npy"))


def recorded(store: Path, user: str) -> tuple[str, int]:
    db = sqlite3.connect(store / "memsense.sqlite")
    try:
        (fmt,) = db.execute("SELECT value FROM meta WHERE key='format'").fetchone()
        (crc,) = db.execute("SELECT crc FROM users WHERE user_id=?", (user,)).fetchone()
    finally:
        db.close()
    return fmt, crc


def raw_bytes(path: Path) -> bytes:
    return np.ascontiguousarray(np.load(path, mmap_mode="r")).tobytes()


def as_older_store(store: Path) -> None:
    """Turn a store into what memsense wrote before: format memsense-store-1 with Adler-32
    checksums, and columns files of format 1 (no ids, route masks or session BM25)."""
    db = sqlite3.connect(store / "memsense.sqlite")
    db.execute("UPDATE meta SET value='memsense-store-1' WHERE key='format'")
    for user, file in db.execute("SELECT user_id, file FROM users").fetchall():
        db.execute("UPDATE users SET crc=? WHERE user_id=?", (zlib.adler32(raw_bytes(store / "vectors" / file)), user))
        path = columns_path(store, user)
        with np.load(path) as z:
            kept = {k: z[k] for k in z.files if k not in ("memory_ids", "routes") and not k.startswith("sessions_")}
        kept["format"] = np.array([1, kept["format"][1]], dtype=np.int64)
        with open(path, "wb") as fh:
            np.savez(fh, **kept)
    db.commit()
    db.close()


def fingerprint(store: Path) -> dict[str, str]:
    return {str(p.relative_to(store)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(store.rglob("*"))
            if p.is_file()}


def test_a_new_store_records_the_xxh3_of_each_vector_file(tmp_path):
    make_store(tmp_path / "s", {"u": 50})
    fmt, crc = recorded(tmp_path / "s", "u")
    assert fmt == FORMAT == "memsense-store-2"
    assert crc % 2 ** 64 == xxhash.xxh3_64_intdigest(raw_bytes(vector_file(tmp_path / "s", "u")))
    saved = UserColumns.load(columns_path(tmp_path / "s", "u"), 50)
    assert saved.memory_ids is not None and saved.routes is not None and set(saved.sessions) == {"english", "plain"}


def test_damaged_vectors_of_a_new_store_fail_the_xxh3_check(tmp_path):
    make_store(tmp_path / "s", {"u": 60, "v": 20})
    damage_vectors(tmp_path / "s", "u")
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        with pytest.raises(MemsenseError, match=r"the data of user 'u' .* is damaged .*does not match its checksum"):
            engine.recall("u", "alpha", 40)
        assert engine.recall("v", "alpha", 40).size
    finally:
        engine.close()


def test_an_older_store_opens_unchanged_recalls_the_same_and_says_nothing(tmp_path):
    make_store(tmp_path / "s", {"u": 240, "v": 31})
    new = pools_of(tmp_path / "s", "u")
    as_older_store(tmp_path / "s")
    before = fingerprint(tmp_path / "s")
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        old = [engine.recall("u", q, 300) for q in QUERIES]
        assert engine.note("u") == ""
    finally:
        engine.close()
    for a, b in zip(new, old):
        same_pool(a, b)
    assert fingerprint(tmp_path / "s") == before  # nothing written into it


def test_an_older_store_keeps_checking_its_adler32(tmp_path):
    make_store(tmp_path / "s", {"u": 60})
    as_older_store(tmp_path / "s")
    damage_vectors(tmp_path / "s", "u")
    recall_fails(tmp_path / "s", r"does not match its checksum")


def test_writing_into_an_older_store_keeps_its_format_and_checksum(tmp_path):
    data = make_store(tmp_path / "s", {"u": 40})
    as_older_store(tmp_path / "s")
    store = EmbeddedStore(tmp_path / "s", write=True)
    try:
        from core.cli.bench_scale import DIM, synthetic_user

        chunks, vectors = synthetic_user("w", 30, np.random.default_rng(3))
        store.write_user("w", chunks, vectors, RandomEmbedder.key, DIM)
        assert len(store.read_user("w")[0]) == 30 and len(store.read_user("u")[0]) == len(data["u"])
    finally:
        store.close()
    fmt, crc = recorded(tmp_path / "s", "w")
    assert fmt == "memsense-store-1" and crc == zlib.adler32(raw_bytes(vector_file(tmp_path / "s", "w")))


def test_migrate_in_place_brings_older_columns_files_up_to_date(tmp_path):
    make_store(tmp_path / "s", {"u": 80})
    new = pools_of(tmp_path / "s", "u")
    as_older_store(tmp_path / "s")
    store = EmbeddedStore(tmp_path / "s", write=True)
    try:
        assert store.add_columns() == 1
    finally:
        store.close()
    assert UserColumns.load(columns_path(tmp_path / "s", "u"), 80).sessions
    for a, b in zip(new, pools_of(tmp_path / "s", "u")):
        same_pool(a, b)


def test_a_first_recall_reads_its_pool_rows_without_waiting_for_every_payload(tmp_path, monkeypatch):
    """Until the payloads' read on the second thread is done, a pool's rows are read by row."""
    make_store(tmp_path / "s", {"u": 300})
    release, whole_reads = threading.Event(), []
    read = PayloadReader._read

    def slow_read(self: PayloadReader) -> None:
        release.wait(30)
        whole_reads.append(1)
        read(self)

    monkeypatch.setattr(PayloadReader, "_read", slow_read)
    engine = Engine(tmp_path / "s", embedder=RandomEmbedder())
    try:
        pool = engine.recall("u", "alpha bravo", 40)
        assert not whole_reads  # the recall did not wait for the whole read
        assert [c.memory_id for c in pool.chunks] == list(np.array(engine.chunks("u").memory_ids)[pool.chunks.rows])
        release.set()
        assert [c.memory_id for c in engine.chunks("u")] == engine.chunks("u").memory_ids
    finally:
        release.set()
        engine.close()


def test_a_missing_row_is_an_error_of_the_recall_that_reads_it(tmp_path):
    make_store(tmp_path / "s", {"u": 120})
    db = sqlite3.connect(tmp_path / "s" / "memsense.sqlite")
    db.execute("DELETE FROM chunks WHERE user_id='u' AND row=7")
    db.commit()
    db.close()
    recall_fails(tmp_path / "s", r"the data of user 'u' .* is damaged \(119 readable chunks of (the )?120", depth=120)


def test_a_store_of_a_newer_format_is_one_error_naming_the_formats_read(tmp_path):
    make_store(tmp_path / "s", {"u": 10})
    db = sqlite3.connect(tmp_path / "s" / "memsense.sqlite")
    db.execute("UPDATE meta SET value='memsense-store-9' WHERE key='format'")
    db.commit()
    db.close()
    with pytest.raises(MemsenseError, match=r"has format 'memsense-store-9'; this memsense reads "
                                            r"'memsense-store-1' and 'memsense-store-2'$"):
        EmbeddedStore(tmp_path / "s")
