"""The SQL of a recall in a live Memsense database (SPEC §10), as Memsense's phase 1 words it.

The same scoped rows (`tenant_id`, `scope`, `user_id`, `status = 'active'`), each dense route
ordered by pgvector cosine with `ROW_NUMBER`, the lexical route by `ts_rank_cd` over
`websearch_to_tsquery('english')`; every route's list is kept `depth` deep and comes back with
its raw scores (`recall_sql`). `service_pool_sql` is the service's own pool, read only for the
order PostgreSQL gives tied rows. Nothing here runs a query: `core.recall.memsense.database` does.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

ROUTE_COLUMNS: dict[str, str] = {
    "vec_full": "embedding",
    "vec_user": "embedding_user",
    "vec_asst": "embedding_assistant",
    "vec_next_user": "embedding_next_user",
    "facet_personal_info": "embedding_facet_personal_info",
    "facet_preferences": "embedding_facet_preferences",
    "facet_events": "embedding_facet_events",
}
"""The dense routes and the `memory_chunk_embeddings` column behind each (§10)."""

LEXICAL_DOCUMENT = "to_tsvector('english', COALESCE(f.task_tag, '') || ' ' || COALESCE(f.content, ''))"


def query_literal(vector: Sequence[float] | np.ndarray) -> str:
    """The query vector as Memsense sends it to PostgreSQL: each component to 8 decimals."""
    return "[" + ",".join(f"{float(x):.8f}" for x in vector) + "]"


_FILTERED_EMBEDDINGS = ("embedding", "embedding_user", "embedding_assistant", "embedding_facet_personal_info",
                        "embedding_facet_preferences", "embedding_facet_events", "embedding_next_user")
_PHASE1_ROUTES = ("vec_full", "vec_user", "vec_asst", "lexical", "facet_personal_info", "facet_preferences",
                  "facet_events", "vec_next_user")
"""Memsense's phase 1 reads these columns and runs these routes in this order; the same shape here
gives PostgreSQL the same plan, so its order among tied rows is the service's."""


def _filtered() -> str:
    """The scoped rows of one search (tenant, scope, optional session, agent and user, active)."""
    emb = ", ".join(f"e.{col}" for col in _FILTERED_EMBEDDINGS)
    return f"""filtered AS (
    SELECT c.id, c.memory_id, c.content, c.tags, c.task_tag, c.score, c.timestamp_ms,
           c.session_id, c.agent_id, c.user_id, c.memory_kind, c.source, c.next_user_text, {emb}
    FROM memory_chunks c
    LEFT JOIN memory_chunk_embeddings e ON e.chunk_id = c.id
    WHERE c.tenant_id = %(tenant)s
      AND c.scope = %(scope)s
      AND (%(session)s::text IS NULL OR c.session_id = %(session)s)
      AND (%(agent)s::text IS NULL OR c.agent_id = %(agent)s)
      AND (%(user)s::text IS NULL OR c.user_id = %(user)s)
      AND c.status = 'active'
  )"""


def _route_cte(route: str, raw: bool) -> str:
    """One route's ranked list: `ROW_NUMBER` over cosine (dense) or `ts_rank_cd` (lexical)."""
    if route == "lexical":
        order = f"ts_rank_cd({LEXICAL_DOCUMENT}, t.tsq)"
        source = "filtered f CROSS JOIN t"
        where = f"t.tsq IS NOT NULL AND t.tsq <> ''::tsquery AND {LEXICAL_DOCUMENT} @@ t.tsq"
    else:
        col = ROUTE_COLUMNS[route]
        order = f"(1 - (f.{col} <=> q.v))"
        source = "filtered f CROSS JOIN q"
        where = f"f.{col} IS NOT NULL AND vector_dims(f.{col}) = q.dims"
    extra = f", {order}::float8 AS raw" if raw else ""
    return f"""r_{route} AS (
    SELECT f.id, ROW_NUMBER() OVER (ORDER BY {order} DESC) AS rn{extra}, '{route}'::text AS route
    FROM {source}
    WHERE {where}
    LIMIT %(depth)s
  )"""


def _with(raw: bool) -> str:
    return (f"WITH {_filtered()},\n  t AS (SELECT websearch_to_tsquery('english', %(text)s) AS tsq),\n"
            "  q AS (SELECT %(vec)s::vector AS v, vector_dims(%(vec)s::vector) AS dims),\n  "
            + ",\n  ".join(_route_cte(r, raw) for r in _PHASE1_ROUTES))


def recall_sql() -> str:
    """Every route's ranked list with its rank (`ROW_NUMBER`) and raw score, `depth` deep."""
    union = " UNION ALL ".join(f"SELECT id, rn, raw, route FROM r_{r}" for r in _PHASE1_ROUTES)
    return _with(raw=True) + f"\nSELECT f.memory_id, u.route, u.rn, u.raw FROM ({union}) u JOIN filtered f ON f.id = u.id"


def service_pool_sql() -> str:
    """The service's own pool (its `route_limit` per route, RRF `k` = 15 summed in the database,
    best `candidate_limit`), kept only for its order: PostgreSQL's order among tied rows."""
    union = "\n      UNION ALL ".join(f"SELECT id, rn, route FROM r_{r}" for r in _PHASE1_ROUTES)
    return _with(raw=False) + f""",
  rrf AS (
    SELECT id, SUM(1.0 / (15 + rn)) AS rrf_score, ARRAY_AGG(DISTINCT route ORDER BY route) AS routes
    FROM (
      {union}
    ) u
    GROUP BY id
  )
  SELECT f.id AS chunk_id, f.memory_id, f.content, f.tags, f.task_tag, f.score, f.timestamp_ms,
         f.session_id, f.agent_id, f.user_id, f.memory_kind, f.source, f.next_user_text,
         f.embedding::text AS embedding, r.rrf_score, r.routes
  FROM rrf r
  JOIN filtered f ON f.id = r.id
  ORDER BY r.rrf_score DESC
  LIMIT %(limit)s"""


CHUNK_COLUMNS = ("c.id, c.memory_id, c.user_id, c.session_id, c.source, c.content, c.tags, c.task_tag, "
                 "c.memory_kind, c.score, c.timestamp_ms, c.facet_personal_info, c.facet_preferences, "
                 "c.facet_events, c.next_user_text")
