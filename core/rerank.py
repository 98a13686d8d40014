"""Re-rank a cached recall pool under a config: fusion, pool cut, turn support, final score,
MMR and explain (SPEC §3-§6). A pure function: same pool + same config = same ranking.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping, NamedTuple

import numpy as np

from core import mmr
from core import schemes  # noqa: F401  (registers the §9 schemes in FUSIONS and CUTS)
from core.config import Config
from core.fusion import FUSIONS, cut_rows, live_mask
from core.pool import RecallPool
from core.turn_support import SessionSupport, supports, turn_support
from core.types import ROUTES, Chunk


def clamp01(value: Any) -> float:
    """Memory score clamped to [0, 1]; a missing, non-numeric or NaN value is 0.5 (§3)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return 0.5
    return min(1.0, max(0.0, float(value)))


def final_score(rrf_score: float, memory_score: Any, alpha: float) -> float:
    """`final = rrf_score + alpha · clamp01(memory_score)`, rounded to 6 decimals (§3)."""
    return _final(rrf_score, clamp01(memory_score), alpha)


def _final(rrf_score: float, clamped_memory_score: float, alpha: float) -> float:
    """`final_score` for a memory score already clamped (the pool clamps once per chunk)."""
    return round(rrf_score + alpha * clamped_memory_score, 6)


class Row(NamedTuple):
    """One row re-ranked by MMR: a session row (session-first) or any pool candidate.

    A NamedTuple, not a dataclass: a re-rank makes one per row on every slider tick.
    """

    index: int  # row of the recall pool
    rrf_score: float  # with turn support on session rows
    routes: tuple[str, ...]
    final_score: float
    session_rrf_score: float = 0.0
    turn_support: float = 0.0
    supporting_turn_count: int = 0
    best_turn: int | None = None  # pool row of the best supporting turn
    best_turn_routes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fate:
    """What happened to one chunk for this query and config ("why not")."""

    memory_id: str
    status: str  # selected | fallback_fill | duplicate | outranked | supporting_turn |
    #              cut_from_pool | beyond_route_limit | zero_weight | absent | dropped
    reason: str
    rank: int | None = None  # 1-based result rank when selected
    duplicate_of: str | None = None
    supports_session: str | None = None


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
        return [self.pool.chunks[r.index].memory_id for r in self.selected_rows]

    @cached_property
    def results(self) -> tuple[dict[str, Any], ...]:
        """Memsense's result records (§6 field names), with this project's explain additions."""
        return tuple(self._result(pos) for pos in range(len(self.selection.order)))

    def _result(self, pos: int) -> dict[str, Any]:
        step = self.selection.steps[pos]
        row = self.rows[step.row]
        chunk = self.pool.chunks[row.index]
        cfg = self.config
        explain: dict[str, Any] = {
            "rrf_score": row.rrf_score,
            "memory_score": clamp01(chunk.memory_score),
            "alpha": cfg.alpha,
            "routes": list(row.routes),
            "diversity": {
                "lambda": cfg.mmr_lambda,
                "duplicate_threshold": cfg.duplicate_threshold,
                "selected_rank": self.selection.selected_rank[pos],
            },
        }
        if self.session_first:
            explain.update(
                session_first=True,
                session_rrf_score=row.session_rrf_score,
                turn_support=row.turn_support,
                supporting_turn_count=row.supporting_turn_count,
                best_turn_routes=list(row.best_turn_routes),
            )
        explain["route_hits"] = self.route_hits(row.index)
        explain["mmr"] = mmr.step_explain(step, self._row_id)
        if self.session_first and row.best_turn is not None:
            explain["best_turn_id"] = self.pool.chunks[row.best_turn].memory_id
        return {
            "chunk_id": chunk.memory_id,
            "memory_id": chunk.memory_id,
            "content": chunk.content,
            "tags": list(chunk.tags),
            "task_tag": chunk.task_tag,
            "session_id": chunk.session_id,
            "score": chunk.memory_score,
            "rrf_score": row.rrf_score,
            "routes": list(row.routes),
            "final_score": row.final_score,
            "explain": explain,
            "neighbors": [] if self.session_first else self._neighbors(chunk),
        }

    def _row_id(self, row: int | None) -> str | None:
        return None if row is None else self.pool.chunks[self.rows[row].index].memory_id

    def _neighbors(self, chunk: Chunk) -> list[dict[str, Any]]:
        """Previous and next chunk of the same session and kind, in time order (§4)."""
        prev_id, next_id = self.pool.neighbors.get(chunk.memory_id, (None, None))
        out = []
        for rel, mid in (("previous", prev_id), ("next", next_id)):
            if mid is not None and mid in self.pool.neighbor_chunks:
                n = self.pool.neighbor_chunks[mid]
                out.append({"relation": rel, "memory_id": mid, "content": n.content, "session_id": n.session_id})
        return out

    def route_hits(self, index: int) -> dict[str, dict[str, Any]]:
        """Rank, raw score and RRF contribution of one pool row in every route that found it."""
        ranks, raw = self.pool.ranks[index].tolist(), self.pool.scores[index].tolist()
        share, live = self.contributions[index].tolist(), self.live[index].tolist()
        return {route: {"rank": ranks[j], "raw_score": raw[j], "contribution": share[j], "counted": live[j]}
                for j, route in enumerate(ROUTES) if ranks[j]}

    @cached_property
    def _row_of_index(self) -> dict[int, int]:
        return {r.index: i for i, r in enumerate(self.rows)}

    @cached_property
    def _candidate_rank(self) -> dict[int, int]:
        return {int(r): i + 1 for i, r in enumerate(self.candidates)}

    def fate(self, memory_id: str) -> Fate:
        """Why this chunk is, or is not, in the results."""
        from core.explain import fate_of

        return fate_of(self, memory_id)


def candidate_pool(fused: np.ndarray, live: np.ndarray, limit: int) -> np.ndarray:
    """Rows found by at least one live route, best `limit` by fused score (ties by id = row)."""
    found = np.flatnonzero(live.any(axis=1))
    order = found[np.argsort(-fused[found], kind="stable")]
    return order[:limit]


def _session_rows(pool: RecallPool, cfg: Config, fused: np.ndarray, routes_of, cands: np.ndarray) -> list[Row]:
    st = pool.static
    support: dict[int, SessionSupport] = supports(cands, st.is_turn, st.session_of, fused)
    in_pool = np.zeros(pool.size, dtype=bool)
    in_pool[cands] = True
    supported = np.zeros(int(st.session_of.max(initial=0)) + 1, dtype=bool)
    supported[list(support)] = True
    wanted = ~st.is_turn & (in_pool | supported[st.session_of])
    rows = []
    scores, memory, pooled, session_of = fused.tolist(), st.memory_score.tolist(), in_pool.tolist(), st.session_of.tolist()
    for i in np.flatnonzero(wanted).tolist():
        own = scores[i] if pooled[i] else 0.0
        sup = support.get(session_of[i])
        ts = turn_support(sup.best_turn_rrf_score, cfg.turn_support_cap, cfg.turn_support_factor) if sup else 0.0
        rrf_score = own + ts
        rows.append(
            Row(
                index=i,
                rrf_score=rrf_score,
                routes=(routes_of(i) if pooled[i] else ()) + (("turn_support",) if ts > 0 else ()),
                final_score=_final(rrf_score, memory[i], cfg.alpha),
                session_rrf_score=own,
                turn_support=ts,
                supporting_turn_count=sup.supporting_turn_count if sup else 0,
                best_turn=sup.best_turn_row if sup else None,
                best_turn_routes=routes_of(sup.best_turn_row) if sup else (),
            )
        )
    return rows


def rerank(pool: RecallPool, cfg: Config) -> Ranking:
    """Fuse, cut the pool, add turn support, score and select with MMR (§3-§5)."""
    if pool.depth < cfg.route_limit and int(pool.ranks.max(initial=0)) >= pool.depth:
        raise ValueError(f"recall kept {pool.depth} per route; this config needs {cfg.route_limit}")
    live = live_mask(pool.ranks, cfg)
    fused, contributions = FUSIONS[cfg.scheme](pool.ranks, pool.scores, live, cfg, pool.chunks)
    drops = cut_rows(fused, pool.ranks, live, cfg, pool.chunks)
    kept = live
    if drops:
        kept = live.copy()
        kept[list(drops)] = False
    cands = candidate_pool(fused, kept, cfg.candidate_limit)
    route_sets = (live[:, _ALPHABETICAL] @ _BITS).tolist()

    def routes_of(i: int) -> tuple[str, ...]:
        return _ROUTE_SETS[route_sets[i]]

    rows = _session_rows(pool, cfg, fused, routes_of, cands) if cfg.session_first else []
    session_first = bool(rows)
    if not session_first:
        scores, memory = fused.tolist(), pool.static.memory_score.tolist()
        rows = [Row(i, scores[i], routes_of(i), _final(scores[i], memory[i], cfg.alpha)) for i in cands.tolist()]
    rows.sort(key=lambda r: (-r.final_score, r.index))
    selection = select_rows(rows, pool, cfg)
    return Ranking(pool, cfg, fused, contributions, live, cands, session_first, tuple(rows), selection, drops)


_ALPHABETICAL = np.argsort(np.array(ROUTES))
_SORTED_ROUTES = tuple(sorted(ROUTES))
_BITS = 1 << np.arange(len(ROUTES))
_ROUTE_SETS = [tuple(r for b, r in enumerate(_SORTED_ROUTES) if mask >> b & 1) for mask in range(1 << len(ROUTES))]
"""Every subset of routes as its sorted name tuple, indexed by bit mask (alphabetical bits)."""


def select_rows(rows: list[Row], pool: RecallPool, cfg: Config) -> mmr.Selection:
    idx = np.array([r.index for r in rows], dtype=np.int64)
    st = pool.static
    return mmr.select(
        np.array([r.final_score for r in rows]),
        pool.vectors[idx],
        st.dims[idx],
        st.tags[idx],
        top_k=cfg.top_k,
        mmr_lambda=cfg.mmr_lambda,
        duplicate_threshold=cfg.duplicate_threshold,
        tag_weight=cfg.tag_weight,
        fallback_fill=cfg.fallback_fill,
    )
