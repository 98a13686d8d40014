"""The embedded store's lock (SQLite's own lock on memsense.sqlite): one writer or many readers,
across processes and within one; nothing lost when an older store's `lock` file is deleted while
two writers race; no Unix-only module needed; a writer deletes only what writers leave behind."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
from core.errors import MemsenseError
from core.recall.backends import open_store
from core.recall.embedded.store import DB
from core.records import DENSE_ROUTES

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

RACER = """
import sys, numpy as np
from core.errors import MemsenseError
from core.recall.backends import open_store
from core.cli.bench_scale import synthetic_user, DIM, RandomEmbedder
path, tag, users = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(sum(map(ord, tag)))
try:
    store = open_store(path, create=True)
except MemsenseError as exc:
    print(f"refused: {exc}", flush=True)
    sys.exit(2)
try:
    for i in range(users):
        chunks, vectors = synthetic_user(f"{tag}{i}", 150, rng)
        store.write_user(f"{tag}{i}", chunks, vectors, RandomEmbedder.key, DIM)
        print(f"stored {tag}{i}", flush=True)
finally:
    store.close()
"""


def make_store(path: Path, users: dict[str, int]) -> None:
    rng = np.random.default_rng(0)
    store = open_store(path, create=True)
    try:
        for user, n in users.items():
            chunks, vectors = synthetic_user(user, n, rng)
            store.write_user(user, chunks, vectors, RandomEmbedder.key, DIM)
    finally:
        store.close()


def check_every_user_whole(path: Path, expected: set[str], foreign_npy: int = 0) -> None:
    store = open_store(path)
    try:
        assert set(store.users()) == expected
        for user in expected:
            assert len(store.read_user(user)[0]) > 0
            assert len(store.search(user, np.ones(DIM), DENSE_ROUTES, 3)["vec_full"].rows) == 3
        assert len(list((path / "vectors").glob("*.npy"))) == len(expected) + foreign_npy
    finally:
        store.close()


def racer(path: Path, tag: str, users: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RACER, str(path), tag, str(users)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV)


@pytest.mark.slow
def test_two_writers_racing_with_the_lock_file_deleted_lose_no_user(tmp_path):
    """The issue's scenario, ten times: a store of an older memsense (it has a `lock` file); a
    writer starts, its `lock` is deleted mid-write, a second writer starts. The second is
    refused while the first writes (or runs after it); every user either one said it stored
    is whole, and no vector file is left over."""
    for trial in range(10):
        path = tmp_path / f"s{trial}"
        make_store(path, {"old": 50})
        (path / "lock").touch()
        first = racer(path, "a", 4)
        assert first.stdout.readline().startswith("stored a0")  # mid-write from here on
        (path / "lock").unlink()
        second = racer(path, "b", 2)
        outs = [p.communicate(timeout=120) for p in (first, second)]
        stored = {"old"} | {line.split()[1] for out, _ in outs for line in out.splitlines() if line.startswith("stored")}
        stored.add("a0")
        assert first.returncode == 0, outs[0][1]
        assert second.returncode == 0 or (second.returncode == 2 and "open in another process" in outs[1][0]), outs[1]
        assert {f"a{i}" for i in range(4)} <= stored
        check_every_user_whole(path, stored)


def test_a_store_whose_lock_file_is_gone_opens_and_still_locks(tmp_path):
    path = tmp_path / "s"
    make_store(path, {"u": 30})
    assert not (path / "lock").exists()  # no lock file is written, none is needed
    reader, other_reader = open_store(path), open_store(path)
    try:
        with pytest.raises(MemsenseError, match="is open in another process \\(being read or written\\)"):
            open_store(path, write=True)
        assert reader.users() == other_reader.users() == ["u"]
    finally:
        reader.close()
        other_reader.close()
    writer = open_store(path, write=True)
    try:
        for kwargs in ({}, {"write": True}):
            with pytest.raises(MemsenseError, match="is open in another process"):
                open_store(path, **kwargs)
        probe = subprocess.run([sys.executable, "-c", ("import sys; from core.recall.backends import open_store\n"
                                                      "open_store(sys.argv[1])"), str(path)],
                               check=False, capture_output=True, text=True, cwd=ROOT, env=ENV)
        assert "is open in another process (being written)" in probe.stderr
    finally:
        writer.close()
    check_every_user_whole(path, {"u"})


NO_FCNTL = """
import sys
sys.modules["fcntl"] = None  # as on Windows: any import of it fails
import numpy as np
from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
from core.cli.main import main
from core.recall.backends import open_store
path = sys.argv[1]
store = open_store(path, create=True)
chunks, vectors = synthetic_user("u", 30, np.random.default_rng(1))
store.write_user("u", chunks, vectors, RandomEmbedder.key, DIM)
store.close()
assert main(["users", "--store", path]) == 0
writer = open_store(path, write=True)
assert main(["users", "--store", path]) == 1  # locked by the writer: the command failed
writer.close()
assert main(["drop", "--store", path, "--user", "u"]) == 0
assert sys.modules["fcntl"] is None
"""


def test_the_store_opens_and_locks_without_fcntl(tmp_path):
    run = subprocess.run([sys.executable, "-c", NO_FCNTL, str(tmp_path / "s")], check=False, capture_output=True,
                         text=True, cwd=ROOT, env=ENV, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["u", f"dropped user 'u' from {tmp_path / 's'}; ingest it again to bring it back"]
    assert run.stderr.splitlines() == [(f"memsense: error: the store {tmp_path / 's'} is open in another process "
                                        "(being written); wait for it or close the other memsense or memsense-gui using it")]


def test_a_writer_deletes_leftovers_of_dead_writers_and_nothing_else(tmp_path):
    path = tmp_path / "s"
    make_store(path, {"u": 30})
    vectors = path / "vectors"
    leftovers = ["u-0123456789ab.npy", "u-0123456789ab.columns.npz", "v-ba9876543210.columns.npz.part"]
    foreign = ["notes.txt", "u-backup.npy", "mine.npz"]
    for name in leftovers + foreign:
        (vectors / name).write_bytes(b"x")
    open_store(path).close()  # a reader deletes nothing
    assert all((vectors / n).exists() for n in leftovers + foreign)
    open_store(path, write=True).close()
    assert not any((vectors / n).exists() for n in leftovers) and all((vectors / n).exists() for n in foreign)
    check_every_user_whole(path, {"u"}, foreign_npy=1)


def test_rewriting_and_dropping_delete_only_the_files_they_replaced(tmp_path):
    path = tmp_path / "s"
    make_store(path, {"u": 30, "v": 20})
    before = {p.name for p in (path / "vectors").iterdir()}
    make_store(path, {"u": 30})  # u again: its old two files go, v's stay
    after = {p.name for p in (path / "vectors").iterdir()}
    assert len(after) == 4 and len(before & after) == 2 and all(n.startswith("v-") for n in before & after)
    store = open_store(path, write=True)
    try:
        store.drop_user("v")
    finally:
        store.close()
    assert {p.name for p in (path / "vectors").iterdir()} == after - before


def test_a_writer_says_when_its_files_vanish_right_after_its_commit(tmp_path, monkeypatch):
    from core.recall.embedded import store as embedded

    path = tmp_path / "s"
    make_store(path, {"u": 10})
    store = open_store(path, write=True)
    original = embedded.EmbeddedStore._swap_in

    def swap_then_lose(self, user_id, file, *args):  # a sync tool or another machine removes the new file
        out = original(self, user_id, file, *args)
        (path / "vectors" / file).unlink()
        return out

    monkeypatch.setattr(embedded.EmbeddedStore, "_swap_in", swap_then_lose)
    try:
        chunks, vectors = synthetic_user("w", 10, np.random.default_rng(2))
        with pytest.raises(MemsenseError, match=r"the data of user 'w' .* is damaged .*vanished from .* right after "
                                                r"it was stored.*memsense drop"):
            store.write_user("w", chunks, vectors, RandomEmbedder.key, DIM)
    finally:
        store.close()


def test_a_reader_after_a_killed_writer_rolls_back_its_half_commit(tmp_path):
    """A writer killed inside its commit leaves a hot journal; the next reader rolls it back
    (in SQLite's normal mode, before it keeps its shared lock), and a second reader can still open."""
    path = tmp_path / "s"
    make_store(path, {"u": 10})
    script = ("import os, sys\nfrom core.recall.backends import open_store\ns = open_store(sys.argv[1], write=True)\n"
              "s.db.execute('BEGIN IMMEDIATE')\ns.db.execute(\"DELETE FROM chunks\")\n"
              "s.db.execute('PRAGMA cache_size=0')\ns.db.execute(\"DELETE FROM users\")\nos._exit(9)")
    subprocess.run([sys.executable, "-c", script, str(path)], check=False, cwd=ROOT, env=ENV, timeout=120)
    first = open_store(path)
    try:
        second = open_store(path)
        second.close()
        assert first.users() == ["u"] and len(first.read_user("u")[0]) == 10
    finally:
        first.close()
    assert not (path / f"{DB}-journal").exists()
