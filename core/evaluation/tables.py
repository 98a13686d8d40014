"""Whole tables as rows and as CSV: the candidate pool, the route-rank matrix, an evaluation.

Each table function returns `(header, rows)` with plain values (numbers stay numbers, absent
is ""), every row of the data, not the rows a view happens to show, and a snippet column right
after the rank (`core.recall.lexical.snippet`: the best-matching sentence, query terms in «»).
`write_csv` writes one atomically (temp file and rename), UTF-8, so a failed save never leaves
half a file.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Sequence

from core.atomic import write_output
from core.errors import MemsenseError
from core.evaluation.evaluate import PresetEvaluation, category_name
from core.rank.ranking import Ranking
from core.rank.record import pool_order
from core.recall.lexical.snippet import chunk_snippet
from core.records import ROUTES

Table = tuple[tuple[str, ...], list[tuple[Any, ...]]]


POOL_TERMS = ("memory_id", "kind", "session_id", "session_rrf_score", "turn_support", "rrf_score", "memory_score",
              "final_score", "selected_rank")
"""The record's terms (`core.rank.glossary` keys) in a pool table row, after its rank and snippet."""


def pool_table(ranking: Ranking) -> Table:
    """Every row of the Candidate pool in its order (`core.rank.record.pool_order`): rank,
    snippet, the record's scores, the rank in each route, and the fate."""
    header = ("pool_rank", "snippet", *POOL_TERMS, *(f"{r}_rank" for r in ROUTES), "status", "reason")
    rows = []
    query = ranking.pool.query
    for i in pool_order(ranking):
        chunk = ranking.pool.chunks[i]
        rec = ranking.record(chunk.memory_id)
        ranks = ranking.pool.ranks[i].tolist()
        rows.append((_cell(rec.pool_rank), chunk_snippet(chunk, query).marked(), *(_cell(rec.value(k)) for k in POOL_TERMS),
                     *(r or "" for r in ranks), rec.status, rec.reason))
    return header, rows


def _cell(value: Any) -> Any:
    return "" if value is None else value


def matrix_table(ranking: Ranking) -> Table:
    """The route-rank matrix: every pool row any route found, its rank in each route ("" = absent)."""
    header = ("pool_rank", "snippet", "memory_id", *ROUTES)
    query = ranking.pool.query
    rank_of = {int(i): n for n, i in enumerate(ranking.candidates.tolist(), start=1)}
    found = [i for i in range(ranking.pool.size) if (ranking.pool.ranks[i] > 0).any()]
    found.sort(key=lambda i: (rank_of.get(i, len(rank_of) + 1), ranking.pool.chunks[i].memory_id))
    rows = [(rank_of.get(i, ""), chunk_snippet(ranking.pool.chunks[i], query).marked(),
             ranking.pool.chunks[i].memory_id, *(r or "" for r in ranking.pool.ranks[i].tolist())) for i in found]
    return header, rows


def evaluation_table(results: Sequence[PresetEvaluation]) -> Table:
    """One row per preset: every metric overall, then per category (`<metric> <category>`)."""
    if not results:
        return ("preset",), []
    metrics = results[0].metric_names
    cats = sorted({c for r in results for c in r.per_category})
    header = ("preset", "questions", *metrics,
              *(f"{m} [{c} {category_name(c)}]" for c in cats for m in metrics))
    rows = [(r.preset, r.questions, *(r.overall.get(m, "") for m in metrics),
             *(r.per_category.get(c, {}).get(m, "") for c in cats for m in metrics)) for r in results]
    return header, rows


def csv_text(table: Table) -> str:
    header, rows = table
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def write_csv(table: Table, path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() != ".csv":
        raise MemsenseError(f"{path}: table exports end in .csv")
    return write_output(path, csv_text(table))
