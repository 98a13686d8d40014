"""Re-rank a cached recall pool under a config: fusion, pool cut, turn support, final score,
MMR and explain (SPEC §3-§6). A pure function: same pool + same config = same ranking, and it
never searches: a pool too shallow for the config is refused (`core.recall.pool.PoolTooShallow`).
"""
from __future__ import annotations

import numpy as np

from core.config import Config
from core.rank import mmr
from core.rank.fusion import FUSIONS, cut_rows, live_mask
from core.rank.ranking import Ranking, Row
from core.rank.score import final_of_clamped
from core.rank.turn_support import SessionSupport, supports, turn_support
from core.recall.pool import RecallPool
from core.records import ROUTES


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
                final_score=final_of_clamped(rrf_score, memory[i], cfg.alpha),
                session_rrf_score=own,
                turn_support=ts,
                supporting_turn_count=sup.supporting_turn_count if sup else 0,
                best_turn=sup.best_turn_row if sup else None,
                best_turn_routes=routes_of(sup.best_turn_row) if sup else (),
            )
        )
    return rows


def rerank(pool: RecallPool, cfg: Config) -> Ranking:
    """Fuse, cut the pool, add turn support, score and select with MMR (§3-§5).

    The pool is first taken at the config's `route_limit` (`RecallPool.at_depth`, an array cut
    of a deeper pool): the pool a fresh search with this config recalls, so the ranking and its
    explain are that search's. A pool shallower than `route_limit` (unless its lists ended
    before its depth) raises `PoolTooShallow`: deepen it first (`core.recall.pool.deepen`)."""
    pool = pool.at_depth(cfg.route_limit)
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
        rows = [Row(i, scores[i], routes_of(i), final_of_clamped(scores[i], memory[i], cfg.alpha)) for i in cands.tolist()]
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
        mmr.tag_matrix([pool.chunks[i].tags for i in idx.tolist()]),  # only the rows MMR sees: pools can be 30,000 deep
        top_k=cfg.top_k,
        mmr_lambda=cfg.mmr_lambda,
        duplicate_threshold=cfg.duplicate_threshold,
        tag_weight=cfg.tag_weight,
        fallback_fill=cfg.fallback_fill,
        sessions=st.session_of[idx] if cfg.distinct_sessions else None,
    )
