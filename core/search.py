"""Search = recall, then re-rank: the one place the two halves of the pipeline meet.

`core.recall` returns a pool at an explicit depth and knows nothing of ranking; `core.rank`
re-ranks a pool it is given and never searches. This layer sits above both (and below the
evaluation and the CLI, which use it).
"""
from __future__ import annotations

from core.config import Config
from core.rank.ranking import Ranking
from core.rank.rerank import rerank
from core.recall.protocol import RecallEngine


def search(engine: RecallEngine, user_id: str, query: str, cfg: Config | None = None) -> Ranking:
    """Recall `query` for one user as deep as `cfg` needs, and re-rank the pool under `cfg`."""
    cfg = cfg or Config()
    return rerank(engine.recall_for(user_id, query, cfg), cfg)
