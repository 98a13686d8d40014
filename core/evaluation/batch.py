"""Re-rank many cached pools under one config at once: the inner loop of tuning.

`selections(cfg)` gives, per question, the session numbers `rerank(pool, cfg)` would select,
in pick order, without building rankings. Questions of similar pool size are padded into
blocks (one row per question, one column per pool row), and every step of `rerank` runs on
a whole block at once, elementwise, so each value is the one `rerank` computes:

- RRF: each route's share `w / (k + rank)` is read from a table over the ranks (the same
  division), and the shares are added route by route as `route_sum` adds them;
- the candidate cut: the `candidate_limit`-th best fused score of each question found by a
  partition, ties taken in row order (the stable sort's order);
- turn support, the final score and its rounding to 6 decimals (`round6`, Python's `round`);
- MMR, one pick of every question per step. Cosines and tag Jaccards do not depend on the
  config: for a user with many questions they are computed once for every pair of its chunks
  (the same `mmr.row_dots` sums, see `core.rank.mmr`) and a pick reads its row of the table;
  for the others each pick's row is computed for every question at once (`mmr.group_dots`).
  Both are `core.evaluation.batch_chunks.ChunkPairs`.

Schemes other than RRF, and pools recalled less deep than a config's `route_limit`, go
through `rerank` itself.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from core.config import Config
from core.evaluation.batch_chunks import PICKS, TABLE_BYTES, ChunkPairs, SharedVectors, users_of
from core.rank.fusion import CUTS, weights_of
from core.rank.rerank import rerank
from core.rank.score import round6
from core.recall.pool import RecallPool
from core.records import ROUTES

@dataclass
class _Block:
    """Questions of similar pool size, padded to the widest: row b is question `qs[b]`."""

    qs: np.ndarray  # (B,) positions in the batch
    ranks: np.ndarray  # (8, B, W) intp, 0 = absent or padding
    valid: np.ndarray  # (B, W)
    is_turn: np.ndarray  # (B, W)
    session: np.ndarray  # (B, W) session code within the pool
    sessions: int  # codes are < sessions
    memory: np.ndarray  # (B, W) clamped memory score
    number: np.ndarray  # (B, W) session number
    loc: np.ndarray  # (B, W) the chunk's index among its user's chunks
    user: np.ndarray  # (B,) the question's user
    srows: np.ndarray  # (B, R) columns of the session (non-turn) rows, ascending
    svalid: np.ndarray  # (B, R)
    depth: np.ndarray  # (B,) how deep each pool's routes were kept
    top_rank: int
    by_session: np.ndarray  # flat cells of valid rows, grouped by (question, session)
    starts: np.ndarray  # where each (question, session) group starts in `by_session`
    segment: np.ndarray  # each group's flat cell in a (B, sessions) array


class PoolBatch:
    """Every pool's rows laid out in blocks; everything no knob changes is built once."""

    def __init__(self, pools: Sequence[RecallPool], table_bytes: int = TABLE_BYTES, picks: int = PICKS,
                 shared: SharedVectors | None = None):
        """`shared`: the large users' vectors in shared memory, for a worker's shard."""
        self.pools: list[RecallPool] | None = list(pools)  # None in a copy for a worker (`without_pools`)
        self._questions = len(self.pools)
        self._depths = np.array([p.depth for p in self.pools], dtype=np.int64)
        self.arrays_kept = True  # False in a copy that re-ranks through `rerank` alone (`without_arrays`)
        users, locs, owner = users_of(self.pools, shared)
        self.pairs: ChunkPairs | None = ChunkPairs(users, owner, [p.size for p in self.pools], table_bytes, picks)
        numbers = [np.array(u.numbers, dtype=np.int64) for u in users]
        self.blocks = [self._block(qs, locs, [numbers[owner[q]][locs[q]] for q in qs], [owner[q] for q in qs])
                       for qs in _size_classes([p.size for p in self.pools])]

    def _pools(self) -> list[RecallPool]:
        if self.pools is None:
            raise ValueError("this batch has no pools: it re-ranks only RRF configs its pools are deep enough for")
        return self.pools

    def _pairs(self) -> ChunkPairs:
        if self.pairs is None:
            raise ValueError("this batch has no arrays: it re-ranks every config through rerank")
        return self.pairs

    def _block(self, qs: list[int], locs: list[np.ndarray], numbers: list[np.ndarray], users: list[int]) -> _Block:
        """The block of the pools `qs`, with each pool's session numbers and user."""
        ps = [self._pools()[q] for q in qs]
        b, w = len(ps), max([p.size for p in ps] + [1])
        ranks = np.zeros((len(ROUTES), b, w), dtype=np.intp)
        valid = np.zeros((b, w), dtype=bool)
        is_turn, session = np.zeros((b, w), dtype=bool), np.zeros((b, w), dtype=np.int64)
        memory, number, loc = np.zeros((b, w)), np.zeros((b, w), dtype=np.int64), np.zeros((b, w), dtype=np.int64)
        for i, (q, p) in enumerate(zip(qs, ps)):
            n, st = p.size, p.static
            ranks[:, i, :n] = p.ranks.T
            valid[i, :n] = True
            is_turn[i, :n], session[i, :n], memory[i, :n] = st.is_turn, st.session_of, st.memory_score
            number[i, :n] = numbers[i]
            loc[i, :n] = locs[q]
        srows, svalid = _compact(valid & ~is_turn)
        sessions = int(session.max(initial=0)) + 1
        group = (np.arange(b)[:, None] * sessions + session)[valid]  # (question, session) of each valid cell
        cells = np.flatnonzero(valid)
        order = np.argsort(group, kind="stable")
        starts = np.flatnonzero(np.diff(group[order], prepend=-1))
        return _Block(np.array(qs, dtype=np.int64), ranks, valid, is_turn, session, sessions,
                      memory, number, loc, np.array(users, dtype=np.int64), srows, svalid,
                      np.array([p.depth for p in ps], dtype=np.int64), int(ranks.max(initial=0)),
                      cells[order], starts, group[order][starts])

    # ------------------------------------------------------------------ the selections

    def selected_sessions(self, cfg: Config) -> list[list[int]]:
        """Per pool, the session numbers of `rerank(pool, cfg).selected_rows`, in pick order."""
        picked, count = self.selections(cfg)
        return [row[:n] for row, n in zip(picked.tolist(), count.tolist())]

    def batched(self, cfg: Config) -> bool:
        """Every question of `cfg` goes through the batched re-rank (not `rerank`)."""
        return cfg.scheme == "rrf" and cfg.scheme not in CUTS and bool((self._depths >= cfg.route_limit).all())

    def without_pools(self) -> "PoolBatch":
        """A copy with the arrays alone, for a worker process: it takes only configs that
        `batched` accepts (the others need the pools, for `rerank`)."""
        lean = copy.copy(self)
        lean.pools = None
        return lean

    def without_arrays(self) -> "PoolBatch":
        """A copy with the pools alone, which re-ranks every config through `rerank` (the same
        selections, slower): what a process keeps once workers hold the arrays, for the configs
        they do not take."""
        pools = self._pools()
        bare = copy.copy(self)
        bare.blocks, bare.pairs = [], None
        bare.arrays_kept = False
        bare.pools = pools
        return bare

    @property
    def size(self) -> int:
        return self._questions

    def selections(self, cfg: Config) -> tuple[np.ndarray, np.ndarray]:
        """(session numbers (Q, top_k), padded with -1; how many each question selected)."""
        out = np.full((self._questions, max(cfg.top_k, 1)), -1, dtype=np.int64)
        count = np.zeros(self._questions, dtype=np.int64)
        if self.pools is None and not self.batched(cfg):
            raise ValueError("this batch has no pools: it re-ranks only RRF configs its pools are deep enough for")
        if cfg.scheme != "rrf" or cfg.scheme in CUTS or not self.arrays_kept:
            for q, p in enumerate(self._pools()):
                self._by_rerank(q, p, cfg, out, count)
            return out, count
        for blk in self.blocks:
            shallow = blk.depth < cfg.route_limit
            for i in np.flatnonzero(shallow).tolist():  # `rerank` says whether the pool can serve
                self._by_rerank(int(blk.qs[i]), self._pools()[blk.qs[i]], cfg, out, count)
            if shallow.all():
                continue
            cols, n = self._select(blk, cfg)
            rows = np.flatnonzero(~shallow)
            sel = np.take_along_axis(blk.number, cols, axis=1)
            out[blk.qs[rows], : cols.shape[1]] = np.where(np.arange(cols.shape[1]) < n[:, None], sel, -1)[rows]
            count[blk.qs[rows]] = n[rows]
        return out, count

    @staticmethod
    def _by_rerank(q: int, pool: RecallPool, cfg: Config, out: np.ndarray, count: np.ndarray) -> None:
        ranking = rerank(pool, cfg)  # rows of the pool cut to the config's depth; a shallower pool is refused
        sessions = [ranking.pool.chunks[r.index].session_number for r in ranking.selected_rows]
        out[q, : len(sessions)] = sessions
        count[q] = len(sessions)

    def _select(self, blk: _Block, cfg: Config) -> tuple[np.ndarray, np.ndarray]:
        """Pool columns each question selects, in pick order (B, K), and their count (B,)."""
        fused, found = _fuse(blk, cfg)
        in_pool = _candidates(fused, found, cfg.candidate_limit)
        cols, final, valid = self._mmr_rows(blk, cfg, fused, in_pool)
        order = np.argsort(np.where(valid, -final, np.inf), axis=1, kind="stable")  # final desc, ties by row
        cols, final, valid = (np.take_along_axis(a, order, axis=1) for a in (cols, final, valid))
        if cfg.distinct_sessions:  # selection by session: only the first row of each session is selectable
            valid = valid & _first_of_session(np.where(valid, np.take_along_axis(blk.session, cols, axis=1), -1))
        picks, n = self._mmr(blk, cfg, cols, final, valid)
        return np.take_along_axis(cols, picks, axis=1), n

    def _mmr_rows(self, blk: _Block, cfg: Config, fused: np.ndarray, in_pool: np.ndarray):
        """The rows MMR sees, (B, M) columns in row order with final scores: session rows
        (§4) where a question has any, else its candidates."""
        b = np.arange(len(blk.qs))[:, None]
        session_first = np.zeros(len(blk.qs), dtype=bool)
        if cfg.session_first:
            turns = np.where(in_pool & blk.is_turn, fused, -np.inf).ravel()[blk.by_session]
            best = np.full((len(blk.qs), blk.sessions), -np.inf)
            if len(blk.starts):
                best.ravel()[blk.segment] = np.maximum.reduceat(turns, blk.starts)  # best candidate turn per session
            s = blk.session[b, blk.srows]
            supported = best[b, s] > -np.inf
            pooled = in_pool[b, blk.srows]
            wanted = blk.svalid & (pooled | supported)
            session_first = wanted.any(axis=1)
            best_turn = np.where(supported, best[b, s], 0.0)  # not -inf: a factor of 0 times -inf is NaN
            support = np.where(supported, np.minimum(cfg.turn_support_cap, cfg.turn_support_factor * best_turn), 0.0)
            rrf = np.where(pooled, fused[b, blk.srows], 0.0) + support
            final_s = round6(rrf + cfg.alpha * blk.memory[b, blk.srows])
            pos, s_valid = _compact(wanted)
            s_cols = np.take_along_axis(blk.srows, pos, axis=1)
            s_final = np.take_along_axis(final_s, pos, axis=1)
        c_cols, c_valid = _compact(in_pool & ~session_first[:, None])
        c_final = round6(fused[b, c_cols] + cfg.alpha * blk.memory[b, c_cols])
        if not session_first.any():
            return c_cols, c_final, c_valid
        width = max(s_cols.shape[1], c_cols.shape[1])
        sf = session_first[:, None]
        return (np.where(sf, _pad(s_cols, width), _pad(c_cols, width)),
                np.where(sf, _pad(s_final, width), _pad(c_final, width)),
                np.where(sf, _pad(s_valid, width), _pad(c_valid, width)))

    def _mmr(self, blk: _Block, cfg: Config, cols: np.ndarray, final: np.ndarray,
             valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`mmr.select`'s pick order for every question, one pick of every question per step:
        each value and each choice is the one `select` makes (see the module docstring)."""
        n_rows = valid.sum(axis=1)
        target = np.minimum(cfg.top_k, n_rows)
        picks = np.zeros((len(blk.qs), max(int(target.max(initial=0)), 1)), dtype=np.int64)
        count = np.zeros(len(blk.qs), dtype=np.int64)
        loc = np.take_along_axis(blk.loc, cols, axis=1)
        remaining = valid.copy()
        max_red = np.zeros(valid.shape)
        active = np.flatnonzero(target > 0)
        pick = np.zeros(len(blk.qs), dtype=np.int64)
        lam, thr = cfg.mmr_lambda, cfg.duplicate_threshold
        while len(active):
            picks[active, count[active]] = pick[active]
            count[active] += 1
            remaining[active, pick[active]] = False
            red = self._pairs().between(blk.user[active], loc[active], pick[active], cfg.tag_weight)
            max_red[active] = np.maximum(max_red[active], red)
            active = active[count[active] < target[active]]
            if not len(active):
                break
            rem, red = remaining[active], max_red[active]
            free = rem & ~(red >= thr)
            has_free = free.any(axis=1)
            score = np.where(free, lam * final[active] - (1.0 - lam) * red, -np.inf)
            chosen = np.where(has_free, np.argmax(score, axis=1), np.argmax(rem, axis=1))
            keep = has_free | cfg.fallback_fill
            pick[active[keep]] = chosen[keep]
            active = active[keep]
        return picks, count

def _fuse(blk: _Block, cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """Fused RRF score (B, W), added route by route as `route_sum` does, and which rows a
    live route found."""
    weights, limit = weights_of(cfg), cfg.route_limit
    top = max(blk.top_rank, 1)
    live = np.zeros((len(ROUTES), top + 1), dtype=bool)
    live[:, 1: min(limit, top) + 1] = True
    live &= (weights > 0)[:, None]
    table = np.zeros(live.shape)
    ranks = np.broadcast_to(np.arange(top + 1, dtype=np.float64), live.shape)
    np.divide(np.broadcast_to(weights[:, None], live.shape), cfg.rrf_k + ranks, out=table, where=live)
    fused = table[0][blk.ranks[0]]
    for r in range(1, len(ROUTES)):
        fused += table[r][blk.ranks[r]]
    if (table[live] > 0).all():  # every live share is positive: found = some share
        return fused, fused > 0
    found = live[0][blk.ranks[0]]
    for r in range(1, len(ROUTES)):
        found |= live[r][blk.ranks[r]]
    return fused, found


def _candidates(fused: np.ndarray, found: np.ndarray, limit: int) -> np.ndarray:
    """Each question's best `limit` found rows by fused score, ties by row (B, W) mask."""
    if fused.shape[1] <= limit:
        return found
    negated = np.where(found, -fused, np.inf)
    negated.partition(limit - 1, axis=1)
    cut = -negated[:, limit - 1][:, None]  # the limit-th best (-inf when fewer were found)
    above = found & (fused > cut)
    at = found & (fused == cut)
    room = limit - above.sum(axis=1)
    tied = np.flatnonzero(at.sum(axis=1) > room)  # more rows at the cut than places: the first ones in row order
    if len(tied):
        at[tied] &= np.cumsum(at[tied], axis=1) <= room[tied, None]
    return above | at


def _first_of_session(sessions: np.ndarray) -> np.ndarray:
    """(B, M) whether each position is the first of its session in its row (`mmr.first_of_session`)."""
    order = np.argsort(sessions, axis=1, kind="stable")  # within a session, positions stay in order
    ordered = np.take_along_axis(sessions, order, axis=1)
    first = np.ones(sessions.shape, dtype=bool)
    first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    out = np.empty_like(first)
    np.put_along_axis(out, order, first, axis=1)
    return out


def _compact(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column positions of each row's True cells, left-aligned (B, max count), and validity."""
    count = mask.sum(axis=1)
    width = max(int(count.max(initial=0)), 1)
    rows, cols = np.nonzero(mask)
    starts = np.concatenate(([0], np.cumsum(count)))[:-1]
    out = np.zeros((mask.shape[0], width), dtype=np.int64)
    out[rows, np.arange(len(rows)) - starts[rows]] = cols
    return out, np.arange(width)[None, :] < count[:, None]


def _pad(a: np.ndarray, width: int) -> np.ndarray:
    return np.pad(a, ((0, 0), (0, width - a.shape[1])))


def _size_classes(sizes: Sequence[int]) -> list[list[int]]:
    """Questions grouped by pool size up to the next power of two (padding at most doubles a block)."""
    groups: dict[int, list[int]] = {}
    for q, n in enumerate(sizes):
        groups.setdefault(max(int(n) - 1, 0).bit_length(), []).append(q)
    return [groups[g] for g in sorted(groups)]


def batch_for(pools: Mapping[str, RecallPool], question_ids: Sequence[str]) -> PoolBatch:
    return PoolBatch([pools[q] for q in question_ids])
