"""What the app and the evaluation need of a recall engine: the embedded `Engine`, the
read-only `PostgresEngine` of a live Memsense, the test fakes and the GUI benchmark's synthetic
engine all satisfy it. Abilities only some engines have are members every engine declares,
with a value that says "absent" (False, None, ""), so no caller probes an engine for them."""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from core.config import Config
from core.recall.pool import RecallPool
from core.records import Chunk


@runtime_checkable
class RecallEngine(Protocol):
    """Recall once per query (slow), everything after it is a re-rank of the pool (fast)."""

    location: str
    """Where the store is: a folder, a Qdrant URL, a PostgreSQL address."""

    @property
    def pools_deepen(self) -> bool:
        """Whether its pools keep their query's exact route scores, so `core.recall.pool.deepen`
        ranks deeper lists with no new search. False: a pool has the fixed depth it was recalled at,
        so recall as deep as any config to be ranked needs."""

    model_text: str | None
    """The models the stored vectors name, for a status line (a live Memsense: "name (384 dims)");
    None: they are the engine's own model's (`model_path`)."""

    @property
    def model_path(self) -> str | None:
        """The folder of the one model that embeds queries; None when queries are embedded per user
        by the model its data names (a live Memsense)."""

    def users(self) -> list[str]:
        """The users of the store, sorted."""

    def chunks(self, user_id: str) -> Sequence[Chunk]:
        """Every chunk of one user (for "why not" on chunks no route found)."""

    def load_model(self) -> None:
        """Load the query embedding model now (otherwise on the first recall)."""

    def recall(self, user_id: str, query: str, depth: int | None = None) -> RecallPool:
        """Every route's list for `query`, kept `depth` deep (SPEC §2). A re-rank refuses a pool
        shallower than its config's `route_limit`, so ask for the deepest any config to be ranked
        needs; with `pools_deepen`, a pool can be deepened later (`core.recall.pool.deepen`).
        None: the engine's default (the default settings' `route_limit`, or `MAX_ROUTE_DEPTH`
        for fixed pools)."""

    def recall_for(self, user_id: str, query: str, cfg: Config) -> RecallPool:
        """The pool one search under `cfg` re-ranks (`core.search.search`): deep enough for it,
        with whatever else of `cfg` the engine's recall depends on (a live Memsense's tie order)."""

    def note(self, user_id: str) -> str:
        """How the store could serve this user better (e.g. a missing columns file), or ""."""

    def close(self) -> None:
        """Release the store and the model."""
