"""A full disk (issue 21, item 4): `ingest`, `drop`, a vector write and a `--study-db` each end
in one `memsense: error:` line naming the path (and, for ingest, the users stored and not
stored); nothing stored before is lost. On a real full disk (a small tmpfs, where this process
may mount one: root) and by fault injection (SQLite's page cap, a short write) everywhere."""
from __future__ import annotations

import errno
import re
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.cli.bench_scale import DIM, RandomEmbedder, synthetic_user
from core.errors import MemsenseError
from core.recall.backends import open_store
from core.recall.engine import DEMO_DATASET, DEMO_QUESTIONS
from tests.cli.test_bad_input_catalogue import run_cli

DEMO_USERS = ["demo-ana", "demo-mei", "demo-raj"]


def one_error_line(code: int, err: str, tb: str | None) -> str:
    assert tb is None, tb
    lines = [line for line in err.splitlines() if line.startswith(("memsense:", " ")) or "Traceback" in line
             or "SQL" in line]
    assert code == 1 and len(lines) == 1 and lines[0].startswith("memsense: error: "), err
    return lines[0]


def fill(folder: Path) -> None:
    """Take every free byte of the file system `folder` is on (if any is left)."""
    try:
        with open(folder / "filler", "wb") as fh:
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()
    except OSError as exc:
        assert exc.errno == errno.ENOSPC


@pytest.fixture
def small_disk(tmp_path):
    """`mount(kib)`: a tmpfs of that size, unmounted after the test; skipped where this process
    may not mount one (the fault-injection tests below cover the same code paths)."""
    point = tmp_path / "disk"
    point.mkdir()
    mounted = []

    def mount(kib: int) -> Path:
        run = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(point)],
                             check=False, capture_output=True)
        if run.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {run.stderr.decode().strip()}")
        mounted.append(point)
        return point

    yield mount
    for p in mounted:
        subprocess.run(["umount", "-l", str(p)], check=False)


def test_ingest_and_drop_on_a_full_tmpfs(small_disk, model_cache, demo_store):
    disk = small_disk(1400)  # the demo store needs about 2.1 MB: its first users fit, not all
    store = disk / "store"
    code, out, err, tb = run_cli(["ingest", str(DEMO_DATASET), "--store", str(store), "--cache", str(model_cache)])
    line = one_error_line(code, err, tb)
    found = re.search(r"stored (\d) of 3 users(?: \(([^)]*)\))?, not stored: (.*)$", line)
    assert found and ("disk is full" in line.lower() or "no space left" in line.lower()), line
    assert str(store) in line, line
    stored = found.group(2).split(", ") if found.group(2) else []
    assert 1 <= len(stored) <= 2 and stored + found.group(3).split(", ") == DEMO_USERS, line
    code, out, err, tb = run_cli(["users", "--store", str(store)])
    assert (code, tb, out.split()) == (0, None, stored), err
    for user in stored:  # whole: searchable
        code, out, err, tb = run_cli(["search", "--store", str(store), "--cache", str(model_cache), "--user", user,
                                      "how many races", "--json"])
        assert (code, tb) == (0, None), err
    assert len(list((store / "vectors").glob("*.npy"))) == len(stored)  # the failed user's file is gone
    fill(disk)
    code, out, err, tb = run_cli(["drop", "--store", str(store), "--user", stored[0]])
    line = one_error_line(code, err, tb)
    assert f"cannot drop user {stored[0]!r} (it is still stored): the disk is full" in line and str(store) in line
    assert run_cli(["users", "--store", str(store)])[1].split() == stored
    (disk / "filler").unlink(missing_ok=True)
    assert run_cli(["drop", "--store", str(store), "--user", stored[0]])[0] == 0


@pytest.mark.slow
def test_a_full_study_db_is_one_line(small_disk, model_cache, demo_store):
    disk = small_disk(64)
    fill(disk)
    code, _, err, tb = run_cli(["tune", str(DEMO_QUESTIONS), "--store", str(demo_store), "--cache", str(model_cache),
                                  "--train", "demo-ana", "--trials", "3", "--quiet", "--study-db", str(disk / "tune.db")])
    line = one_error_line(code, err, tb)
    assert "tuning study" in line and str(disk / "tune.db") in line and "disk is full" in line, line
    assert len(err.strip().splitlines()) == 1, err


# -- fault injection: the same paths without a mount ----------------------------------------------------------------

def _store_with(path: Path, users: list[str]):
    rng = np.random.default_rng(0)
    store = open_store(path, create=True)
    for user in users:
        chunks, vectors = synthetic_user(user, 40, rng)
        store.write_user(user, chunks, vectors, RandomEmbedder.key, DIM)
    return store


def test_a_full_database_in_the_swap_in_is_one_error_and_keeps_the_old_user(tmp_path):
    store = _store_with(tmp_path / "s", ["a"])
    try:
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")  # "database or disk is full" on the next growth
        chunks, vectors = synthetic_user("b", 400, np.random.default_rng(1))
        with pytest.raises(MemsenseError, match=f"cannot store user 'b': the disk is full \\({tmp_path / 's'}"):
            store.write_user("b", chunks, vectors, RandomEmbedder.key, DIM)
        assert store.users() == ["a"] and not store.db.in_transaction
        assert len(list((tmp_path / "s" / "vectors").iterdir())) == 2  # b's two files were removed
        _full_on_delete(store)  # a delete needs no new page, but its journal does: refused on a full disk
        with pytest.raises(MemsenseError, match="cannot drop user 'a' \\(it is still stored\\): the disk is full"):
            store.drop_user("a")
        assert store.users() == ["a"]
    finally:
        store.close()


def _full_on_delete(store) -> None:
    """Make the next DELETE fail as on a full disk (a trigger raising SQLITE_FULL is not possible,
    so the connection is swapped for one whose execute raises it for DELETE statements)."""
    real = store.db

    class Full:
        def __getattr__(self, name):
            return getattr(real, name)

        def execute(self, sql, *args):
            if sql.startswith("DELETE"):
                exc = sqlite3.OperationalError("database or disk is full")
                exc.sqlite_errorcode = sqlite3.SQLITE_FULL
                raise exc
            return real.execute(sql, *args)

    store.db = Full()


def test_a_short_vector_write_names_the_file(tmp_path, monkeypatch):
    from core.recall.embedded import store as embedded

    store = _store_with(tmp_path / "s", ["a"])

    def short(fh, array):
        fh.write(b"\x93NUMPY")
        raise OSError("107520 requested and 992 written")

    monkeypatch.setattr(embedded.np, "save", short)
    try:
        chunks, vectors = synthetic_user("b", 40, np.random.default_rng(1))
        with pytest.raises(MemsenseError, match=f"cannot store user 'b': a short write, 107520 requested and 992 "
                                                f"written \\({tmp_path / 's' / 'vectors'}/b-[0-9a-f]{{12}}\\.npy\\)"):
            store.write_user("b", chunks, vectors, RandomEmbedder.key, DIM)
        assert store.users() == ["a"] and len(list((tmp_path / "s" / "vectors").iterdir())) == 2
    finally:
        store.close()


def test_an_ingest_that_fails_part_way_names_the_users_stored_and_not(tmp_path, monkeypatch, model_cache):
    from core.recall.embedded import store as embedded

    real = embedded.np.save
    calls = []

    def full_on_second(fh, array):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fh, array)

    monkeypatch.setattr(embedded.np, "save", full_on_second)
    store = tmp_path / "s"
    code, _, err, tb = run_cli(["ingest", str(DEMO_DATASET), "--store", str(store), "--cache", str(model_cache)])
    line = one_error_line(code, err, tb)
    assert line.endswith("stored 1 of 3 users (demo-ana), not stored: demo-mei, demo-raj"), line
    assert "cannot store user 'demo-mei': No space left on device" in line and f"({store}/vectors/demo-mei-" in line
    assert run_cli(["users", "--store", str(store)])[1].split() == ["demo-ana"]
