"""Float64 matrices that tuning's worker processes map instead of each receiving a copy.

A large user's unit vectors are the bulk of a worker's shard (at 100,000 chunks about 300 MB of
float64 rows), and every shard of a question set on that user needs nearly all of them. Such a
matrix is made once in anonymous shared memory (a Linux `memfd`, its pages reserved up front so
that a full memory gives an error here, not a crash on first write), its descriptor passed to each
worker over the worker's pipe (`send` / `receive`), and the shard pickles it as a key that the
worker resolves to its read-only mapping. The memory is freed when the last process holding it
lets go, whichever way it ends: there is no name to leak. Where there is no `memfd`
(macOS, Windows), `make` returns None and the rows are pickled with the shard as before.
"""
from __future__ import annotations

import itertools
import mmap
import os
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from typing import Sequence

import numpy as np

_KEYS = itertools.count()
_MAPPED: dict[int, mmap.mmap] = {}
"""In a worker: the mappings received (`receive`), by key, for the shard's rows to resolve."""


class SharedRows:
    """A float64 `(n, d)` matrix in shared memory: `array` here, a key when pickled."""

    __slots__ = ("key", "array", "_fd")

    def __init__(self, key: int, array: np.ndarray, fd: int | None) -> None:
        self.key, self.array, self._fd = key, array, fd

    def __reduce__(self) -> tuple:
        return _mapped, (self.key, self.array.shape)

    @property
    def nbytes(self) -> int:
        return self.array.nbytes

    def close(self) -> None:
        """Let go of the descriptor (this process's mapping stays while `array` is referenced)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def make(shape: tuple[int, int]) -> SharedRows | None:
    """A zeroed shared matrix of `shape`, or None where shared memory cannot be had (no `memfd`
    on this platform, or not enough memory for it): the caller then keeps a plain array."""
    create = getattr(os, "memfd_create", None)
    nbytes = int(np.prod(shape)) * 8
    if create is None or nbytes == 0:
        return None
    fd = create("memsense-tune-rows", getattr(os, "MFD_CLOEXEC", 0))
    try:
        os.posix_fallocate(fd, 0, nbytes)  # reserved now: ENOSPC / ENOMEM here, never SIGBUS on a write
        view = mmap.mmap(fd, nbytes)
    except OSError:
        os.close(fd)
        return None
    return SharedRows(next(_KEYS), np.frombuffer(view, dtype=np.float64).reshape(shape), fd)


def send(conn: Connection, rows: Sequence[SharedRows], pid: int) -> None:
    """Pass the matrices' descriptors to the worker `pid` at the other end of `conn` (before the
    shard that names them)."""
    conn.send([(r.key, r.nbytes) for r in rows])
    for r in rows:
        assert r._fd is not None, "a shared matrix is sent before its descriptor is closed"
        send_handle(conn, r._fd, pid)


def receive(conn: Connection) -> bool:
    """In a worker: map the matrices `send` passed; False when the pipe closed first."""
    try:
        sizes = conn.recv()
        if sizes is None:
            return False
        for key, nbytes in sizes:
            fd = recv_handle(conn)
            try:
                _MAPPED[key] = mmap.mmap(fd, nbytes, prot=mmap.PROT_READ)
            finally:
                os.close(fd)
    except (EOFError, OSError):
        return False
    return True


def _mapped(key: int, shape: tuple[int, int]) -> SharedRows:
    """A shared matrix unpickled in a worker: its read-only mapping (`receive`)."""
    view = _MAPPED.get(key)
    if view is None:
        raise RuntimeError(f"shared rows {key} were not received before the shard that names them")
    return SharedRows(key, np.frombuffer(view, dtype=np.float64).reshape(shape), None)
