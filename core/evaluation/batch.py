"""Re-rank many cached pools under one config at once: the inner loop of tuning.

`selected_sessions(cfg)` gives, per question, the session numbers `rerank(pool, cfg)` would
select, without building rankings: route liveness, RRF, the candidate cut, turn support and
the final score run once over every pool's rows stacked together (elementwise, so each value
is the one `rerank` computes), and only MMR, which is sequential, runs pool by pool through the
same `mmr.select`. Schemes other than RRF, and configs with a cut, go through `rerank` itself.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from core.config import Config
from core.rank.fusion import CUTS, live_mask, route_sum, rrf_contributions, weights_of
from core.rank.pool import RecallPool
from core.rank.rerank import rerank


class PoolBatch:
    """Every pool's rows stacked; per-row arrays that no knob changes are built once."""

    def __init__(self, pools: Sequence[RecallPool]):
        self.pools = list(pools)
        sizes = np.array([p.size for p in self.pools], dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(sizes)))
        self.question_of = np.repeat(np.arange(len(self.pools)), sizes)
        empty = np.zeros((0, 8), dtype=np.int32)
        self.ranks = np.concatenate([p.ranks for p in self.pools] or [empty])
        statics = [p.static for p in self.pools]
        self.is_turn = np.concatenate([s.is_turn for s in statics] or [np.zeros(0, bool)])
        self.memory = np.concatenate([s.memory_score for s in statics] or [np.zeros(0)])
        session_base = np.concatenate(([0], np.cumsum([int(s.session_of.max(initial=-1)) + 1 for s in statics])))
        self.session_of = np.concatenate([s.session_of + session_base[i] for i, s in enumerate(statics)]
                                         or [np.zeros(0, np.int64)])
        self.sessions = int(session_base[-1])
        self.dims = np.concatenate([s.dims for s in statics] or [np.zeros(0, np.int64)])
        vocab = {t: j for j, t in enumerate(sorted({t for p in self.pools for c in p.chunks for t in c.tags}))}
        self.tags = np.zeros((len(self.ranks), max(len(vocab), 1)), dtype=bool)
        n = 0
        for p in self.pools:
            for c in p.chunks:
                self.tags[n, [vocab[t] for t in set(c.tags)]] = True
                n += 1
        self.session_number = np.concatenate([np.array([c.session_number for c in p.chunks], dtype=np.int64)
                                              for p in self.pools] or [np.zeros(0, np.int64)])

    def selected_sessions(self, cfg: Config) -> list[list[int]]:
        """Per pool, the session numbers of `rerank(pool, cfg).selected_rows`, in pick order."""
        if cfg.scheme != "rrf" or cfg.scheme in CUTS or any(p.depth < cfg.route_limit for p in self.pools):
            return [[p.chunks[r.index].session_number for r in rerank(p, cfg).selected_rows] for p in self.pools]
        live = live_mask(self.ranks, cfg)
        fused = route_sum(rrf_contributions(self.ranks, live, weights_of(cfg), cfg.rrf_k))
        cands = self._candidates(fused, live, cfg.candidate_limit)
        rows, final, session_first = self._rows(cfg, fused, cands)
        order = np.lexsort((rows, -final, self.question_of[rows]))
        rows, final = rows[order], final[order]
        bounds = np.searchsorted(self.question_of[rows], np.arange(len(self.pools) + 1))
        orders = self._mmr(rows, final, bounds, cfg)
        return [self.session_number[rows[bounds[q]:bounds[q + 1]][order]].tolist() for q, order in enumerate(orders)]

    def _mmr(self, rows: np.ndarray, final: np.ndarray, bounds: np.ndarray, cfg: Config) -> list[list[int]]:
        """`mmr.select`'s pick order for every pool, one pick of every pool per step.

        Each pool's rows are padded to the longest. The cosine to a pick is the same
        matrix-vector product `mmr.redundancy_to` takes, pool by pool; the rest (clip, dimension
        test, tag Jaccard, the duplicate test and the argmax) is elementwise, so every value
        and every choice is the one `mmr.select` makes."""
        n_q = np.diff(bounds)
        q_count, width = len(self.pools), max(int(n_q.max(initial=0)), 1)
        col = np.arange(width)
        valid = col[None, :] < n_q[:, None]
        slot = np.zeros((q_count, width), dtype=np.int64)
        slot[valid] = rows
        fin = np.zeros((q_count, width))
        fin[valid] = final
        dims = np.where(valid, self.dims[slot], 0)
        tags = self.tags[slot].astype(np.float64) * valid[..., None]
        counts = tags.sum(axis=2)
        units = [p.vectors[rows[bounds[q]:bounds[q + 1]] - self.offsets[q]] for q, p in enumerate(self.pools)]
        remaining = valid.copy()
        max_red = np.zeros((q_count, width))
        target = np.minimum(cfg.top_k, n_q)
        orders: list[list[int]] = [[] for _ in range(q_count)]
        active = np.flatnonzero(target > 0)
        pick = np.zeros(q_count, dtype=np.int64)
        lam, thr = cfg.mmr_lambda, cfg.duplicate_threshold
        while len(active):
            for q in active.tolist():
                orders[q].append(int(pick[q]))
            remaining[active, pick[active]] = False
            cos = np.zeros((len(active), width))
            for i, q in enumerate(active.tolist()):
                cos[i, : n_q[q]] = units[q] @ units[q][pick[q]]
            cos = np.clip(cos, 0.0, 1.0)
            d, p_dim = dims[active], dims[active, pick[active]]
            cos = np.where((d == p_dim[:, None]) & (d > 0), cos, 0.0)
            inter = np.einsum("qmv,qv->qm", tags[active], tags[active, pick[active]])
            union = counts[active] + counts[active, pick[active]][:, None] - inter
            jac = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
            max_red[active] = np.maximum(max_red[active], np.maximum(cos, cfg.tag_weight * jac))
            lengths = np.array([len(orders[q]) for q in active.tolist()])
            active = active[lengths < target[active]]
            if not len(active):
                break
            rem = remaining[active]
            free = rem & ~(max_red[active] >= thr)
            has_free = free.any(axis=1)
            mmr_score = np.where(free, lam * fin[active] - (1.0 - lam) * max_red[active], -np.inf)
            chosen = np.where(has_free, np.argmax(mmr_score, axis=1), np.argmax(rem, axis=1))
            keep = has_free | cfg.fallback_fill
            pick[active[keep]] = chosen[keep]
            active = active[keep]
        return orders

    def _candidates(self, fused: np.ndarray, live: np.ndarray, limit: int) -> np.ndarray:
        """Each pool's best `limit` rows found by a live route, by fused score, ties by row."""
        found = np.flatnonzero(live.any(axis=1))
        found = found[np.lexsort((-fused[found], self.question_of[found]))]  # stable: ties keep row order
        q = self.question_of[found]
        start = np.searchsorted(q, q)  # first position of each row's question
        return found[np.arange(len(found)) - start < limit]

    def _rows(self, cfg: Config, fused: np.ndarray, cands: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows MMR sees and their final scores: session rows (§4) where a pool has any, else
        the candidates."""
        in_pool = np.zeros(len(fused), dtype=bool)
        in_pool[cands] = True
        session_first = np.zeros(len(self.pools), dtype=bool)
        rows = np.zeros(0, dtype=np.int64)
        rrf = np.zeros(0)
        if cfg.session_first:
            turns = cands[self.is_turn[cands]]
            best = np.full(self.sessions, -np.inf)
            np.maximum.at(best, self.session_of[turns], fused[turns])
            supported = best > -np.inf
            wanted = ~self.is_turn & (in_pool | supported[self.session_of])
            rows = np.flatnonzero(wanted)
            session_first[np.unique(self.question_of[rows])] = True
            s = self.session_of[rows]
            best_turn = np.where(supported[s], best[s], 0.0)  # not -inf: factor 0 · -inf would be NaN
            support = np.where(supported[s], np.minimum(cfg.turn_support_cap, cfg.turn_support_factor * best_turn), 0.0)
            rrf = np.where(in_pool[rows], fused[rows], 0.0) + support
        fallback = cands[~session_first[self.question_of[cands]]]
        rows = np.concatenate([rows, fallback])
        rrf = np.concatenate([rrf, fused[fallback]])
        raw = (rrf + cfg.alpha * self.memory[rows]).tolist()
        return rows, np.array([round(x, 6) for x in raw]), session_first


def batch_for(pools: Mapping[str, RecallPool], question_ids: Sequence[str]) -> PoolBatch:
    return PoolBatch([pools[q] for q in question_ids])
