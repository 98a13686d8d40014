"""The storage interface every backend implements (`Store`), and what they share.

Backends: the embedded store (a folder: `core.recall.embedded.store`), a Qdrant server by URL
(`core.recall.qdrant.store`, one collection with a tenant field per user), a live Memsense's
PostgreSQL (read-only: `core.recall.memsense.database`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Protocol

import numpy as np

from core.errors import MemsenseError
from core.records import Chunk


def is_url(location: str | Path) -> bool:
    return str(location).startswith(("http://", "https://"))


@dataclass(frozen=True)
class StoreMeta:
    model_key: str
    dim: int
    users: dict[str, str]  # user_id -> where its data lives (a collection, a file...)


class RouteHits(NamedTuple):
    """One route's list for a query: best first, ties by row (= by memory_id)."""

    rows: np.ndarray  # int64 indexes into the user's chunks in `read_user` order (sorted by memory_id)
    scores: np.ndarray  # float64 raw scores (cosine), same order


Progress = Callable[[int, int], None]


def model_dim(meta: StoreMeta | None, location: str) -> int:
    """The vectors' width from a store's model record; asked only once a user is known, so a store
    without the record is broken."""
    if meta is None:
        raise MemsenseError(f"the store {location} holds users but no model record; build it again")
    return meta.dim


def top_rows(scores: np.ndarray, limit: int) -> np.ndarray:
    """Rows of the `limit` highest finite scores, best first, ties by row (exact, like a full sort)."""
    finite = np.flatnonzero(np.isfinite(scores))
    if len(finite) > limit:
        part = scores[finite]
        kth = np.partition(part, len(part) - limit)[len(part) - limit]
        above = finite[part > kth]
        at = finite[part == kth][: limit - len(above)]
        finite = np.concatenate([above, at])
    return finite[np.lexsort((finite, -scores[finite]))]


class Store(Protocol):
    """What the engine needs from a memory store; every backend (embedded, Qdrant server,
    PostgreSQL) implements it. Errors a user can cause raise `MemsenseError` naming the user
    and the fix; a user whose data is missing or damaged is an error, never an empty result."""

    location: str

    @property
    def scanner(self) -> "ScanStore | None":
        """The store itself when it scans every vector of a user per query and keeps saved columns
        (the embedded store: recall pools then keep their query's exact scores and can deepen);
        None for a server that returns ranked lists (Qdrant)."""

    def meta(self) -> StoreMeta | None:
        """The model that built the store and the users in it; None for a store with nothing in it."""

    def users(self) -> list[str]:
        """Every user id, sorted."""

    def read_user(self, user_id: str) -> tuple[list[Chunk], np.ndarray]:
        """All chunks of a user sorted by memory_id, and their vec_full vectors (zero rows where none)."""

    def search(self, user_id: str, query: np.ndarray, routes: Iterable[str], limit: int) -> dict[str, RouteHits]:
        """Each dense route's best `limit` chunks by cosine to `query` (exact), with raw scores."""

    def write_user(self, user_id: str, chunks: list[Chunk], vectors: dict[str, np.ndarray], model_key: str, dim: int,
                   progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> None:
        """Replace one user's chunks (one row of `vectors[route]` per chunk; zero rows = no text),
        all or nothing: a crash or cancel leaves the user as it was."""

    def drop_user(self, user_id: str) -> None:
        """Remove one user and its data."""

    def close(self) -> None:
        """Release the store (locks, files, connections)."""


class ScanStore(Store, Protocol):
    """A store whose every vector of a user is at hand (`Store.scanner`)."""

    column_notes: dict[str, str]
    """user_id -> why the user opened without its columns file (and the command that writes it)."""

    def scan(self, user_id: str, query: np.ndarray) -> np.ndarray:
        """Cosine of `query` with every chunk on each dense route: float32 (7, n), -inf where no vector."""

    def read_indexed(self, user_id: str, columns: bool = True) -> tuple[Any, np.ndarray, Any]:
        """The user's chunks (a sequence decoded on use, with `memory_ids` in row order: the
        embedded store's `LazyChunks`), vec_full vectors and saved per-row columns (None when
        the columns file is missing or damaged)."""
