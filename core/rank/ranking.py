"""What a re-rank hands out: the MMR input rows and the `Ranking` record (SPEC §6 fields)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping, NamedTuple

import numpy as np

from core.config import Config
from core.rank import mmr
from core.rank.explain import Fate, fate_of
from core.rank.record import CandidateRecord, FateOf, candidate_record, ranking_fate, route_hits, scores_of
from core.recall.pool import RecallPool
from core.records import Chunk


class Row(NamedTuple):
    """One row re-ranked by MMR: a session row (session-first) or any pool candidate.

    A NamedTuple, not a dataclass: a re-rank makes one per row on every slider tick.
    """

    index: int  # type: ignore[assignment]  # row of the recall pool; shadows tuple.index(), never called on a Row
    rrf_score: float  # with turn support on session rows
    routes: tuple[str, ...]
    final_score: float
    session_rrf_score: float = 0.0
    turn_support: float = 0.0
    supporting_turn_count: int = 0
    best_turn: int | None = None  # pool row of the best supporting turn
    best_turn_routes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Ranking:
    """Everything a re-rank computed, as arrays over the pool's rows plus result records."""

    pool: RecallPool
    config: Config
    fused: np.ndarray  # (n,) fused (rrf) score of every pool row
    contributions: np.ndarray  # (n, 8) each live route's share of `fused`
    live: np.ndarray  # (n, 8) route counted for that row
    candidates: np.ndarray  # pool rows that made the candidate pool, in pool order
    session_first: bool
    rows: tuple[Row, ...]  # MMR input, final-score order
    selection: mmr.Selection  # indices into `rows`
    drop_reasons: Mapping[int, str] = field(default_factory=dict)
    """Pool rows a scheme's score cut removed (§9 linear hybrid, quality storage filter), with why."""

    @property
    def dropped(self) -> np.ndarray:
        """The rows of `drop_reasons`, sorted."""
        return np.array(sorted(self.drop_reasons), dtype=np.int64)

    @property
    def selected_rows(self) -> list[Row]:
        return [self.rows[i] for i in self.selection.order]

    @property
    def result_ids(self) -> list[str]:
        return [self.pool.ids[r.index] for r in self.selected_rows]

    @cached_property
    def results(self) -> tuple[dict[str, Any], ...]:
        """Memsense's result records (§6 field names), with this project's explain additions."""
        return tuple(self._result(pos) for pos in range(len(self.selection.order)))

    def _result(self, pos: int) -> dict[str, Any]:
        """Memsense's fields, with the values of the chunk's `CandidateRecord` (its fate aside)."""
        step = self.selection.steps[pos]
        index = self.rows[step.row].index
        chunk = self.pool.chunks[index]
        rec = scores_of(self, index)  # the record's numbers (`core.rank.record`)
        cfg = self.config
        explain: dict[str, Any] = {
            "rrf_score": rec["rrf_score"],
            "memory_score": rec["memory_score"],
            "alpha": cfg.alpha,
            "routes": list(rec["routes"]),
            "diversity": {
                "lambda": cfg.mmr_lambda,
                "duplicate_threshold": cfg.duplicate_threshold,
                "selected_rank": rec["selected_rank"],
            },
        }
        if self.session_first:
            explain.update(
                session_first=True,
                session_rrf_score=rec["session_rrf_score"],
                turn_support=rec["turn_support"],
                supporting_turn_count=rec["supporting_turn_count"],
                best_turn_routes=list(rec["best_turn_routes"]),
            )
        explain["route_hits"] = {route: hit._asdict() for route, hit in rec["route_hits"].items()}
        explain["mmr"] = mmr.step_explain(step, self._row_id)
        if rec.get("best_turn_id") is not None:
            explain["best_turn_id"] = rec["best_turn_id"]
        return {
            "chunk_id": chunk.memory_id,
            "memory_id": chunk.memory_id,
            "content": chunk.content,
            "tags": list(chunk.tags),
            "task_tag": chunk.task_tag,
            "session_id": chunk.session_id,
            "score": chunk.memory_score,
            "rrf_score": rec["rrf_score"],
            "routes": list(rec["routes"]),
            "final_score": rec["final_score"],
            "explain": explain,
            "neighbors": [] if self.session_first else self._neighbors(chunk),
        }

    def _row_id(self, row: int | None) -> str | None:
        return None if row is None else self.pool.ids[self.rows[row].index]

    def _neighbors(self, chunk: Chunk) -> list[dict[str, Any]]:
        """Previous and next chunk of the same session and kind, in time order (§4)."""
        prev_id, next_id = self.pool.neighbors.get(chunk.memory_id, (None, None))
        out = []
        for rel, mid in (("previous", prev_id), ("next", next_id)):
            if mid is not None and mid in self.pool.user_chunks:
                n = self.pool.user_chunks[mid]
                out.append({"relation": rel, "memory_id": mid, "content": n.content, "session_id": n.session_id})
        return out

    def route_hits(self, index: int) -> dict[str, dict[str, Any]]:
        """Rank, raw score and RRF contribution of one pool row in every route that found it."""
        return {route: hit._asdict() for route, hit in route_hits(self, index).items()}

    def record(self, memory_id: str, fate_of: FateOf = ranking_fate) -> CandidateRecord:
        """Every number shown about this chunk (`core.rank.record`), its fate read by `fate_of`."""
        return candidate_record(self, memory_id, fate_of)

    @cached_property
    def row_of_index(self) -> dict[int, int]:
        return {r.index: i for i, r in enumerate(self.rows)}

    @cached_property
    def candidate_rank(self) -> dict[int, int]:
        return {int(r): i + 1 for i, r in enumerate(self.candidates)}

    def fate(self, memory_id: str, deepest: RecallPool | None = None) -> Fate:
        """Why this chunk is, or is not, in the results (`core.rank.explain.fate_of`: `deepest`
        is the query's deepest pool the caller has, for chunks no route found within route_limit)."""
        return fate_of(self, memory_id, deepest)
