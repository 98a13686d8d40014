"""The embedded store: SQLite for chunks and users, one numpy file of route vectors per user.

Layout of a store folder:
- `memsense.sqlite`: `meta` (format, model, dimension), `users` (one row per user: its vector
  file, chunk count and checksum) and `chunks` (every user's chunks in one table keyed by
  `(user_id, row)`: the tenant field leads the key, so one user's rows are one index range);
- `vectors/<user>-<random>.npy`: float32 `(7, n, dim)`, the unit vectors of the seven dense
  routes in row order (zeros where a chunk has no text for a route), read through a memory map,
  checked against the checksum its user's row records (`core.recall.embedded.vectors`);
- `vectors/<user>-<random>.columns.npz`: what recall needs of each chunk as arrays, the BM25
  index and the session documents' BM25 (`core.recall.user_index.UserColumns`), so a user opens
  without reading its rows or decoding every chunk: the payloads are read on a second thread
  meanwhile (stores written before have none or an older one; `memsense migrate STORE --store
  STORE` writes them);
- no lock file: `memsense.sqlite` itself is the lock. Each open store holds SQLite's own file
  lock on it for its lifetime (a reader a shared lock, a writer an exclusive one: one writer, or
  readers in any number of processes), so the lock cannot be lost while the store exists, works
  the same on Linux, macOS and Windows, and is released by the system when a process dies.
  (Stores written by an older memsense have a `lock` file; it is no longer used or needed.)

A user is written to a new vector file and columns file (flushed to disk), then swapped in by one SQLite
transaction, so a crash or `kill -9` at any moment leaves every user as it was. Search is an
exact scan (`vectors @ query`, then argpartition to the depth asked), which returns deep
lists as arrays; see the README's "Storage" section for the measurements behind the choice.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import uuid
import warnings
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from core.errors import Cancelled, MemsenseError
from core.recall.embedded import catalogue, payloads as payload_text
from core.recall.embedded.catalogue import DB, is_embedded_store
from core.recall.embedded.payloads import PayloadReader
from core.recall.embedded.vectors import CHECKSUMS, FORMAT, LEFTOVER, OpenVectors, columns_file, naming
from core.recall.store import Progress, RouteHits, StoreMeta, model_dim, top_rows
from core.recall.user_index import LazyChunks, UserColumns, ids_checksum
from core.records import DENSE_ROUTES, Chunk

__all__ = ["DB", "FORMAT", "EmbeddedStore", "columns_file", "is_embedded_store"]
class EmbeddedStore:
    """A store folder on this machine (see the module docstring)."""

    def __init__(self, location: str | Path, create: bool = False, write: bool = False):
        self.path = Path(location).expanduser()
        self.location = str(self.path)
        if not is_embedded_store(self.path) and not create:
            raise MemsenseError(f"no memory store at {self.path}; build one with "
                                f"`memsense ingest DATASET --store {self.path}`")
        if create:
            self._create_folder()
        db = self.path / DB
        self.writable = os.access(self.path, os.W_OK) and (not db.exists() or os.access(db, os.W_OK))
        if write and not self.writable:
            raise MemsenseError(f"the store {self.path} is read-only (no write permission on the folder or "
                                f"{DB}); it can be searched, but to write into it make it writable or use another --store")
        self.exclusive = write
        self.db, self.format = self._connect(exclusive=write)
        self._open = OpenVectors(CHECKSUMS[self.format], self._damaged)
        self._readers: list[PayloadReader] = []  # reads on second threads, waited for before the database closes
        self._last: tuple[tuple[str, bytes] | None, np.ndarray | None] = (None, None)
        self.column_notes: dict[str, str] = {}  # user -> why it opened without its columns file
        if write:
            self._drop_leftovers()

    # -- opening ------------------------------------------------------------------------------
    def _create_folder(self) -> None:
        try:
            (self.path / "vectors").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemsenseError(f"cannot create the store {self.path}: {exc.strerror}; choose a writable folder") from None

    def _connect(self, exclusive: bool) -> tuple[sqlite3.Connection, str]:
        return catalogue.connect(self.path, self.writable, exclusive)

    # -- meta ---------------------------------------------------------------------------------
    def _dim(self) -> int:
        return model_dim(self.meta(), self.location)

    def meta(self) -> StoreMeta | None:
        rows = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        if "model_key" not in rows:
            return None
        users = dict(self.db.execute("SELECT user_id, file FROM users ORDER BY user_id").fetchall())
        return StoreMeta(rows["model_key"], int(rows["dim"]), users)

    def users(self) -> list[str]:
        return [u for (u,) in self.db.execute("SELECT user_id FROM users ORDER BY user_id")]

    def _user_row(self, user_id: str) -> tuple[str, int, int]:
        row = self.db.execute("SELECT file, n, crc FROM users WHERE user_id=?", (user_id,)).fetchone()
        if row is None:
            known = self.users()
            shown = ", ".join(known[:20]) + (f" … ({len(known)} in all)" if len(known) > 20 else "")
            raise MemsenseError(f"unknown user {user_id!r}; users in this store: {shown or 'none'}")
        return row

    def _damaged(self, user_id: str, what: str) -> MemsenseError:
        return MemsenseError(f"the data of user {user_id!r} in {self.path} is damaged ({what}); other users are "
                             f"unaffected. Drop it with `memsense drop --store {self.path} --user {user_id}`, "
                             "then ingest that user again")

    # -- reading ------------------------------------------------------------------------------
    def read_user(self, user_id: str) -> tuple[list[Chunk], np.ndarray]:
        """All chunks of a user sorted by memory_id, and their unit vec_full vectors (float32)."""
        chunks, vec_full, _ = self.read_indexed(user_id, columns=False)
        self._open.verify(user_id)
        return list(chunks), vec_full

    def read_indexed(self, user_id: str, columns: bool = True) -> tuple[LazyChunks, np.ndarray, UserColumns | None]:
        """A user's chunks (decoded when first used), unit vec_full vectors (float32) and, with
        `columns`, its saved `UserColumns` (None when the store has none for it, or they are
        damaged: the caller builds them from the chunks).

        The vector file's checksum is computed on a second thread while the user is indexed and
        its first query scanned: `scan`, `search`, `route_matrix` and `read_user` wait for it and
        raise if it does not match, so nothing computed from the vectors is returned before they
        are checked. With saved columns that hold the rows' memory ids and route masks, the
        payloads are read on a third thread (a reader's; `PayloadReader`)."""
        file, n, recorded = self._user_row(user_id)
        fresh = user_id not in self._open.matrices
        if fresh:
            m = self._load_vectors(user_id, file, n)
            self._open.check_later(user_id, m, recorded, file)
        masks: np.ndarray | list[int]
        try:
            saved = self._columns(user_id, file, n) if columns else None
            if saved is not None and saved.memory_ids is not None and saved.routes is not None:
                ids, masks = saved.memory_ids, saved.routes
                reader = PayloadReader(self.db, user_id, n, lambda what: self._damaged(user_id, what),
                                       background=not self.exclusive)
                self._readers = [r for r in self._readers if not r.done()] + [reader]
                payloads: list[str] | PayloadReader = reader
            else:
                ids, masks, texts = self._rows(user_id)
                if len(ids) != n or any(a > b for a, b in zip(ids, ids[1:])):
                    raise self._damaged(user_id, f"{len(ids)} readable chunks of {n} recorded")
                payloads = texts
                saved = self._tied(user_id, file, saved, ids)
        except BaseException:
            if fresh:
                self._open.forget(user_id)
            raise
        if fresh:
            self._open.install(user_id, m, np.asarray(masks))
        chunks = LazyChunks(ids, payloads, lambda texts, rows: self._decode(user_id, ids, texts, rows),
                            lambda texts, rows: self._check(user_id, ids, texts, rows))
        return chunks, self._open.matrices[user_id][DENSE_ROUTES.index("vec_full")], saved

    def _rows(self, user_id: str) -> tuple[list[str], list[int], list[str]]:
        """The user's memory ids, route masks and chunk payloads, in row order (one read)."""
        rows = self.db.execute("SELECT memory_id, routes, payload FROM chunks WHERE user_id=? ORDER BY row",
                               (user_id,)).fetchall()
        return [m for m, _, _ in rows], [r for _, r, _ in rows], [p for _, _, p in rows]

    def _decode(self, user_id: str, ids: list[str], payloads: list[str], rows: list[int]) -> list[Chunk]:
        try:
            return payload_text.decode(ids, payloads, rows)
        except payload_text.BadPayload as exc:
            raise self._damaged(user_id, str(exc)) from None

    def _check(self, user_id: str, ids: list[str], payloads: list[str], rows: list[int]) -> None:
        try:
            payload_text.check(ids, payloads, rows)
        except payload_text.BadPayload as exc:
            raise self._damaged(user_id, str(exc)) from None

    def _columns(self, user_id: str, file: str, n: int) -> UserColumns | None:
        """The user's saved columns, if its store has them for its `n` rows."""
        path = self.path / "vectors" / columns_file(file)
        if not path.exists():
            self.column_notes[user_id] = (f"user {user_id!r} has no columns file (an older store), so it opens slowly; "
                                          f"{self._migrate_fix}")
            return None
        try:
            saved = UserColumns.load(path, n)
        except (ValueError, OSError) as exc:
            self._columns_unusable(user_id, f"{path}: {exc}")
            return None
        self.column_notes.pop(user_id, None)
        return saved

    @property
    def _migrate_fix(self) -> str:
        return f"`memsense migrate {self.path} --store {self.path}` writes it"

    def _columns_unusable(self, user_id: str, why: str) -> None:
        note = f"{why}; the chunks of user {user_id!r} were indexed from their rows instead; {self._migrate_fix} again"
        warnings.warn(note, stacklevel=3)
        self.column_notes[user_id] = note

    def _tied(self, user_id: str, file: str, saved: UserColumns | None, ids: list[str]) -> UserColumns | None:
        """`saved` if it was made for the rows of `ids` (a columns file without their ids)."""
        if saved is None or saved.ids_crc == ids_checksum(ids):
            return saved
        self._columns_unusable(user_id, f"{self.path / 'vectors' / columns_file(file)}: it is not for this user's rows")
        return None

    def _matrix(self, user_id: str) -> np.ndarray:
        if user_id not in self._open.matrices:
            file, n, recorded = self._user_row(user_id)
            m = self._load_vectors(user_id, file, n)
            self._open.check_now(user_id, m, recorded, file)
            masks = [r for (r,) in self.db.execute("SELECT routes FROM chunks WHERE user_id=? ORDER BY row", (user_id,))]
            self._open.install(user_id, m, np.array(masks, dtype=np.int64))
        self._open.verify(user_id)
        return self._open.matrices[user_id]

    def _load_vectors(self, user_id: str, file: str, n: int) -> np.ndarray:
        """The user's vector file, memory-mapped and of the recorded shape."""
        return OpenVectors.load(self.path / "vectors" / file, (len(DENSE_ROUTES), n, self._dim()), user_id, self._damaged)

    @property
    def scanner(self) -> "EmbeddedStore":
        """This store scans every vector of a user (`core.recall.store.Store.scanner`)."""
        return self

    def route_matrix(self, user_id: str) -> np.ndarray:
        """The user's unit route vectors, float32 `(7, n, dim)` in `DENSE_ROUTES` order (memory-mapped)."""
        return self._matrix(user_id)

    def scan(self, user_id: str, query: np.ndarray) -> np.ndarray:
        """Exact cosine of the query with every route vector of the user, in one BLAS call:
        float32 `(7, n)` in `DENSE_ROUTES` order, -inf where a chunk has no vector for a route."""
        if user_id not in self._open.matrices:
            self._matrix(user_id)
        m = self._open.matrices[user_id]
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        q = q / norm if norm > 0 else q
        with np.errstate(invalid="ignore", over="ignore"):  # damaged vectors (checked below) may hold NaN or inf
            every = m.reshape(-1, m.shape[2]) @ q
        every[self._open.absent[user_id]] = -np.inf
        self._open.verify(user_id)  # the first scan of a user runs while its checksum is computed
        return every.reshape(m.shape[:2])

    def search(self, user_id: str, query: np.ndarray, routes: Iterable[str], limit: int) -> dict[str, RouteHits]:
        """Exact cosine search of each route: rows of `read_user`'s order, best first, ties by row."""
        key = (user_id, np.asarray(query, dtype=np.float32).tobytes())
        scanned = self._last[1]
        if self._last[0] != key or scanned is None:  # a deeper fetch of the same query (a tie across the cut) reuses the scan
            scanned = self.scan(user_id, query)
            self._last = (key, scanned)
        out = {}
        for route in routes:
            j = DENSE_ROUTES.index(route)
            rows = top_rows(scanned[j], limit)
            out[route] = RouteHits(rows.astype(np.int64), scanned[j][rows].astype(np.float64))
        return out

    # -- writing ------------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if not self.writable:
            raise MemsenseError(f"the store {self.path} is read-only; make it writable or use another --store")
        if not self.exclusive:
            raise MemsenseError(f"the store {self.path} was opened for reading; open it for writing to change it")

    def _write_failed(self, exc: BaseException, what: str) -> MemsenseError:
        return catalogue.write_failed(self.path, exc, what)

    def write_user(self, user_id: str, chunks: list[Chunk], vectors: dict[str, np.ndarray], model_key: str, dim: int,
                   progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> None:
        """Write one user's vectors to a new file, then swap the user in with one transaction."""
        self._check_writable()
        meta = self.meta()
        if meta is not None and meta.users and (meta.model_key != model_key or meta.dim != dim):
            raise MemsenseError(f"this store was built with model {meta.model_key} (dim {meta.dim}); "
                                f"ingest with the same --model or into a new store")
        order = sorted(range(len(chunks)), key=lambda i: chunks[i].memory_id)
        stacked = np.stack([np.asarray(vectors[r], dtype=np.float32)[order] for r in DENSE_ROUTES]) \
            if chunks else np.zeros((len(DENSE_ROUTES), 0, dim), np.float32)
        if stacked.shape[2] != dim or not np.isfinite(stacked).all():
            raise MemsenseError(f"the vectors of user {user_id!r} are not finite {dim}-dimensional rows; nothing was written")
        norms = np.linalg.norm(stacked, axis=2, keepdims=True)
        stacked = np.divide(stacked, norms, out=np.zeros_like(stacked), where=norms > 0)
        present = (norms[..., 0] > 0).astype(np.int64) << np.arange(len(DENSE_ROUTES))[:, None]
        masks = present.sum(axis=0)
        if cancelled and cancelled():
            raise Cancelled("cancelled")
        slug = re.sub(r"[^a-zA-Z0-9_-]", "_", user_id)[:40]
        file = f"{slug}-{uuid.uuid4().hex[:12]}.npy"
        target = self.path / "vectors" / file
        sidecar = self.path / "vectors" / columns_file(file)
        try:
            try:
                self._write_files(target, sidecar, stacked, [chunks[i] for i in order], masks)
                rows = [(user_id, k, chunks[i].memory_id, int(masks[k]), json.dumps(chunks[i].to_payload(), ensure_ascii=False))
                        for k, i in enumerate(order)]
                if cancelled and cancelled():
                    raise Cancelled("cancelled")
                replaced = self._swap_in(user_id, file, rows, self._open.checksum(stacked), model_key, dim)
            except (OSError, sqlite3.DatabaseError) as exc:
                raise self._write_failed(exc, f"store user {user_id!r}") from None
        except BaseException:
            target.unlink(missing_ok=True)
            sidecar.unlink(missing_ok=True)
            raise
        self._remove(replaced)
        missing = [p.name for p in (target, sidecar) if not p.exists()]
        if missing:  # its commit points at them: another process or a sync removed them
            raise self._damaged(user_id, f"{', '.join(missing)} vanished from {self.path / 'vectors'} right after "
                                         "it was stored")
        if progress:
            progress(len(chunks), len(chunks))

    @staticmethod
    def _write_files(target: Path, sidecar: Path, stacked: np.ndarray, chunks: list[Chunk], masks: np.ndarray) -> None:
        """The user's vector file and columns file, flushed to disk."""
        with naming(target), open(target, "wb") as fh:
            np.save(fh, stacked)
            fh.flush()
            os.fsync(fh.fileno())
        with naming(sidecar):
            UserColumns.from_chunks(chunks, masks, sessions=True).save(sidecar)

    def _swap_in(self, user_id: str, file: str, rows: list, crc: int, model_key: str, dim: int) -> str | None:
        """Point the user at `file` in one transaction; returns the file it pointed at before."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            old = db.execute("SELECT file FROM users WHERE user_id=?", (user_id,)).fetchone()
            db.execute("INSERT OR REPLACE INTO meta VALUES ('model_key', ?), ('dim', ?)", (model_key, str(dim)))
            db.execute("DELETE FROM chunks WHERE user_id=?", (user_id,))
            db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", rows)
            db.execute("INSERT OR REPLACE INTO users VALUES (?, ?, ?, ?)", (user_id, file, len(rows), crc))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite has already rolled back after a full disk
                db.execute("ROLLBACK")
            raise
        self._open.forget(user_id)
        self._last = (None, None)
        return old[0] if old else None

    def _remove(self, file: str | None) -> None:
        """Delete a vector file (and its columns file) that this writer's own commit left unused.
        One still open elsewhere (Windows refuses) stays: the next writer removes it."""
        if file is None:
            return
        for name in (file, columns_file(file)):
            try:
                (self.path / "vectors" / name).unlink(missing_ok=True)
            except OSError:
                pass

    def add_columns(self, progress: Progress | None = None) -> int:
        """Write the columns file of every user that has none, a damaged one or one of an older
        format (stores written before them); returns how many were written. Each file is written
        under a temporary name and renamed, so a crash leaves the user as it was."""
        self._check_writable()
        users = self.users()
        written = 0
        for k, user_id in enumerate(users):
            file, _, _ = self._user_row(user_id)
            chunks, _, saved = self.read_indexed(user_id)
            if saved is None or saved.memory_ids is None or saved.routes is None or not saved.sessions:
                path = self.path / "vectors" / columns_file(file)
                part = path.with_name(path.name + ".part")
                masks = [r for (r,) in self.db.execute("SELECT routes FROM chunks WHERE user_id=? ORDER BY row", (user_id,))]
                UserColumns.from_chunks(list(chunks), np.array(masks, dtype=np.int64), sessions=True).save(part)
                os.replace(part, path)
                written += 1
            if progress:
                progress(k + 1, len(users))
        return written

    def drop_user(self, user_id: str) -> None:
        """Remove a user (even one whose data is damaged); other users are untouched."""
        self._check_writable()
        file, _, _ = self._user_row(user_id)
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM chunks WHERE user_id=?", (user_id,))
            db.execute("DELETE FROM users WHERE user_id=?", (user_id,))
            db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise self._write_failed(exc, f"drop user {user_id!r} (it is still stored)") from None
        self._open.forget(user_id)
        self._last = (None, None)
        self._remove(file)

    def _drop_leftovers(self) -> None:
        """Delete what writers that died mid-write left in `vectors/`: files named as `write_user`
        names them (`LEFTOVER`) that no user points to. Only a writer runs this, holding the
        exclusive lock on the database, so no other writer is alive to be writing such a file;
        any other file in the folder is left alone."""
        if not self.writable:
            return
        keep = {name for (f,) in self.db.execute("SELECT file FROM users") for name in (f, columns_file(f))}
        for f in (self.path / "vectors").iterdir():
            if f.name not in keep and LEFTOVER.fullmatch(f.name):
                try:
                    f.unlink(missing_ok=True)
                except OSError:
                    pass

    def close(self) -> None:
        self._open.close()
        for reader in self._readers:
            reader.wait()
        self.db.close()  # releases the lock
