"""The embedded store's vector files: their names, their checksums and the open ones in memory.

A user's vectors are one `.npy` file, float32 `(7, n, dim)`, read through a memory map. Its
checksum is recorded in `memsense.sqlite` when it is written and checked before anything computed
from the vectors is returned. Which checksum depends on the store's format (`CHECKSUMS`): stores of
`memsense-store-1` record Adler-32, stores of `memsense-store-2` xxHash's XXH3-64 (about 4.6× faster
here: 0.20 s against 0.94 s for the 1.07 GB of 100,000 chunks), so an older store keeps verifying
with the checksum it recorded.
"""
from __future__ import annotations

import contextlib
import re
import threading
import zlib
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import xxhash

from core.errors import MemsenseError
from core.records import DENSE_ROUTES

LEFTOVER = re.compile(r"[A-Za-z0-9_-]{0,40}-[0-9a-f]{12}(\.npy|\.columns\.npz)(\.part)?")
"""The names of the files a writer puts in `vectors/` (see `EmbeddedStore.write_user`): the only
files a writer ever deletes there, and only those no user points to."""


def columns_file(vector_file: str) -> str:
    """The columns file written with a vector file (`UserColumns`): same name, other suffix."""
    return vector_file.removesuffix(".npy") + ".columns.npz"


def _bytes(array: np.ndarray) -> memoryview:
    return np.ascontiguousarray(array).data.cast("B")


def adler32(array: np.ndarray) -> int:
    """Adler-32 of the raw bytes (`memsense-store-1`)."""
    return zlib.adler32(_bytes(array))


def xxh3_64(array: np.ndarray) -> int:
    """XXH3-64 of the raw bytes as a signed 64-bit integer (what SQLite stores), `memsense-store-2`."""
    value = xxhash.xxh3_64_intdigest(_bytes(array))
    return value - (1 << 64) if value >= 1 << 63 else value


CHECKSUMS: dict[str, Callable[[np.ndarray], int]] = {"memsense-store-1": adler32, "memsense-store-2": xxh3_64}
"""The vector files' checksum of each store format this memsense reads; the last one is written."""
FORMAT = list(CHECKSUMS)[-1]


@contextlib.contextmanager
def naming(path: Path) -> Iterator[None]:
    """Raise a failed or short write of `path` with its name (numpy's "N requested and M
    written" names no file)."""
    try:
        yield
    except OSError as exc:
        if exc.filename:
            raise
        raise OSError(exc.errno, exc.strerror or f"a short write, {exc}", str(path)) from None


Damaged = Callable[[str, str], MemsenseError]
"""(user_id, what) -> the error naming a user's damaged data and the fix."""


class OpenVectors:
    """The vectors of the users read so far, each kept once its checksum matched the recorded one
    (or while a thread computes it: `verify` waits for it before the vectors are used)."""

    def __init__(self, checksum: Callable[[np.ndarray], int], damaged: Damaged):
        self.checksum = checksum
        self._damaged = damaged
        self.matrices: dict[str, np.ndarray] = {}
        self.absent: dict[str, np.ndarray] = {}  # (route, row) with no vector, flat: set to -inf in place
        self._pending: dict[str, tuple[threading.Thread, list[int], int, str]] = {}
        self._checking = threading.Lock()

    @staticmethod
    def load(path: Path, shape: tuple[int, int, int], user_id: str, damaged: Damaged) -> np.ndarray:
        """The vector file at `path`, memory-mapped, of float32 `shape`."""
        file = f"vectors/{path.name}"
        try:
            m = np.load(path, mmap_mode="r")
        except FileNotFoundError:
            raise damaged(user_id, f"its vector file {file} is missing") from None
        except (ValueError, OSError, EOFError) as exc:  # EOFError: an empty file
            raise damaged(user_id, f"{file} cannot be read: {exc or 'it is empty'}") from None
        if m.dtype != np.float32 or m.shape != shape:
            raise damaged(user_id, f"{file} holds {m.dtype} {m.shape}, expected float32 {shape}")
        return m

    def check_later(self, user_id: str, m: np.ndarray, recorded: int, file: str) -> None:
        """Compute the checksum of `m` on a second thread (zlib and xxhash release the GIL);
        `verify` waits for it."""
        sums: list[int] = []
        worker = threading.Thread(target=lambda: sums.append(self.checksum(m)), name="store-checksum", daemon=True)
        worker.start()
        self._pending[user_id] = (worker, sums, recorded, file)

    def check_now(self, user_id: str, m: np.ndarray, recorded: int, file: str) -> None:
        if self.checksum(m) != recorded:
            raise self._damaged(user_id, f"vectors/{file} does not match its checksum")

    def install(self, user_id: str, m: np.ndarray, masks: np.ndarray) -> None:
        """Keep `m` for searches, with its rows' route masks (bit j: a vector on route j)."""
        masks = np.asarray(masks, dtype=np.int64)
        present = (masks[None, :] >> np.arange(len(DENSE_ROUTES))[:, None]) & 1 == 1
        self.absent[user_id] = np.flatnonzero(~present)
        self.matrices[user_id] = np.asarray(m)  # a plain array over the map: no memmap overhead per use

    def verify(self, user_id: str) -> None:
        """Wait for the checksum `check_later` started, if any; raise (and forget the vectors,
        so the next use reads and checks them again) if it does not match."""
        with self._checking:
            pending = self._pending.get(user_id)
            if pending is None:
                return
            worker, sums, recorded, file = pending
            worker.join()
            del self._pending[user_id]
            if not sums or sums[0] != recorded:
                self.matrices.pop(user_id, None)
                raise self._damaged(user_id, f"vectors/{file} does not match its checksum")

    def forget(self, user_id: str) -> None:
        """A user rewritten or dropped: its vectors go, and a checksum still computed for them is
        waited for (its thread reads the old file) and forgotten."""
        self.matrices.pop(user_id, None)
        with self._checking:
            pending = self._pending.pop(user_id, None)
        if pending is not None:
            pending[0].join()

    def close(self) -> None:
        for user_id in list(self._pending):
            self.forget(user_id)
        self.matrices.clear()
        self.absent.clear()
