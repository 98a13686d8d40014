""""Why not": the fate of any chunk of the user's store for one ranking (SPEC §6)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol

import numpy as np

from core.config import Config
from core.rank import contest
from core.rank.contest import describe
from core.recall.pool import RecallPool
from core.records import ROUTES


@dataclass(frozen=True)
class Fate:
    """What happened to one chunk for this query and config ("why not")."""

    memory_id: str
    status: str  # selected | fallback_fill | duplicate | same_session | outranked | supporting_turn |
    #              cut_from_pool | beyond_route_limit | zero_weight | absent | dropped
    reason: str
    rank: int | None = None  # 1-based result rank when selected
    duplicate_of: str | None = None
    supports_session: str | None = None


class WhyNotSource(contest.ContestSource, Protocol):
    """What "why not" reads of a re-rank: what the contest reads, and the fused scores
    (`core.rank.ranking.Ranking` has it all)."""

    @property
    def fused(self) -> np.ndarray: ...
    @property
    def live(self) -> np.ndarray: ...
    @property
    def session_first(self) -> bool: ...
    @property
    def drop_reasons(self) -> Mapping[int, str]: ...
    @property
    def row_of_index(self) -> Mapping[int, int]: ...
    @property
    def candidate_rank(self) -> Mapping[int, int]: ...


def _hits(ranking: WhyNotSource, i: int, mask: np.ndarray) -> str:
    return ", ".join(f"{ROUTES[j]} #{int(ranking.pool.ranks[i, j])}" for j in np.flatnonzero(mask))


def reads_deepest(ranking: WhyNotSource, memory_id: str) -> bool:
    """Whether `fate_of` reads the deepest pool it is given for this chunk (the caller gets it
    with `core.recall.pool.deepest`, which may have to rank route lists first): no counted route
    found it within route_limit."""
    i = ranking.pool.index_of(memory_id)
    if i is None:
        return True
    return i not in ranking.row_of_index and i not in ranking.drop_reasons and not ranking.live[i].any()


def fate_of(ranking: WhyNotSource, memory_id: str, deepest: RecallPool | None = None) -> Fate:
    """Why this chunk is, or is not, in the results. A chunk no counted route found within
    route_limit is looked up in `deepest` (this query's deepest pool, as the caller has it;
    None: the ranking's own pool), so the answer can tell "ranked below route_limit" from
    "absent from every list" whatever depth the re-rank itself needed."""
    cfg = ranking.config
    i = ranking.pool.index_of(memory_id)
    if i is None or reads_deepest(ranking, memory_id):
        return _unlisted(ranking.pool if deepest is None else deepest, cfg, memory_id)
    row_pos = ranking.row_of_index.get(i)
    if row_pos is not None:  # also a session row no route found, returned for its turns' support
        return _row_fate(ranking, memory_id, row_pos)
    if i in ranking.drop_reasons:
        return Fate(memory_id, "dropped", ranking.drop_reasons[i])
    pool_rank = ranking.candidate_rank.get(i)
    if pool_rank is None:
        better = int((ranking.fused[ranking.live.any(axis=1)] > ranking.fused[i]).sum()) + 1
        return Fate(memory_id, "cut_from_pool",
                    f"found by {_hits(ranking, i, ranking.live[i])} but its fused score {ranking.fused[i]:.4f} "
                    f"ranks #{better}, outside the pool of {cfg.candidate_limit}")
    chunk = ranking.pool.chunks[i]
    if ranking.session_first and chunk.kind == "turn":
        return Fate(memory_id, "supporting_turn",
                    f"turn chunk in the pool at #{pool_rank}: session-first returns sessions; it supports "
                    f"{chunk.session_id}", supports_session=chunk.session_id)
    return Fate(memory_id, "outranked", f"in the pool at #{pool_rank} but not a re-ranked row")


def _unlisted(deep: RecallPool, cfg: Config, memory_id: str) -> Fate:
    """A chunk no counted route found: read from the deepest pool given, so the answer does
    not depend on how deep the pool of this re-rank is (it holds `route_limit`)."""
    i = deep.index_of(memory_id)
    if i is None or not (deep.ranks[i] > 0).any():
        return Fate(memory_id, "absent", f"absent from every route's list (each kept to depth {deep.depth})")
    found = deep.ranks[i] > 0
    hits = ", ".join(f"{ROUTES[j]} #{int(deep.ranks[i, j])}" for j in np.flatnonzero(found))
    zero = found & (np.array([cfg.weight(r) for r in ROUTES]) == 0)
    if zero.any() and not (found & ~zero & (deep.ranks[i] <= cfg.route_limit)).any():
        return Fate(memory_id, "zero_weight", f"found only by routes weighted 0: {hits}")
    return Fate(memory_id, "beyond_route_limit", f"ranked only below route_limit {cfg.route_limit}: {hits}")


def _row_fate(ranking: WhyNotSource, memory_id: str, row_pos: int) -> Fate:
    sel = ranking.selection
    cfg = ranking.config
    row = ranking.rows[row_pos]
    if row_pos in sel.order:
        pos = sel.order.index(row_pos)
        step = sel.steps[pos]
        if step.fallback:
            return Fate(memory_id, "fallback_fill",
                        f"appended at rank {pos + 1} by fallback fill: every remaining row was a duplicate", rank=pos + 1)
        how = "top final score" if step.mmr_score is None else f"mmr {step.mmr_score:.4f}"
        return Fate(memory_id, "selected", f"selected at rank {pos + 1} ({how}, final {row.final_score:.6f})", rank=pos + 1)
    first = sel.same_session.get(row_pos)
    if first is not None:
        first_id = ranking.pool.chunks[ranking.rows[first].index].memory_id
        return Fate(memory_id, "same_session",
                    f"skipped: same session as {first_id}, ranked before it (selection by session keeps the first "
                    "row of each session in final order)", duplicate_of=first_id)
    red = float(sel.max_redundancy[row_pos])
    cause = int(sel.redundant_with[row_pos])
    cause_id = ranking.pool.chunks[ranking.rows[cause].index].memory_id if cause >= 0 else None
    if red >= cfg.duplicate_threshold and cause_id is not None:
        return Fate(memory_id, "duplicate",
                    f"dropped as a duplicate of {cause_id} (redundancy {red:.4f} ≥ threshold {cfg.duplicate_threshold})",
                    duplicate_of=cause_id)
    return Fate(memory_id, "outranked", describe(ranking, row_pos))
