"""What the app and the evaluation need of a recall engine: the embedded `Engine`, the
read-only `PostgresEngine` of a live Memsense, the test fakes and the GUI benchmark's synthetic
engine all satisfy it."""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from core.rank.pool import RecallPool
from core.records import Chunk


@runtime_checkable
class RecallEngine(Protocol):
    """Recall once per query (slow), everything after it is a re-rank of the pool (fast)."""

    def users(self) -> list[str]:
        """The users of the store, sorted."""

    def chunks(self, user_id: str) -> Sequence[Chunk]:
        """Every chunk of one user (for "why not" on chunks no route found)."""

    def load_model(self) -> None:
        """Load the query embedding model now (otherwise on the first recall)."""

    def recall(self, user_id: str, query: str, depth: int | None = None) -> RecallPool:
        """Every route's list for `query`, kept `depth` deep (SPEC §2): the app asks for its
        settings' `route_limit`; a pool that can deepens itself when a knob needs more
        (`RecallPool.at_depth`), others are fixed (None: `MAX_ROUTE_DEPTH`, deep enough for any)."""

    def close(self) -> None:
        """Release the store and the model."""
