"""What beat a row that was not returned: the MMR selection replayed pick by pick (SPEC §5).

At every pick the row competed with the others: the first pick is the top final score; each
later pick is the highest `mmr = lambda · final_score − (1 − lambda) · max_redundancy` among
the rows that are not duplicates (`max_redundancy ≥ duplicate_threshold`). For one row that
was re-ranked but not returned, `contest` gives, for each pick, who won, with what score, and
what the row itself scored at that moment (or that it was a duplicate by then), so "by how
much" is a number taken from the same arithmetic the selection used.
"""
from __future__ import annotations

from typing import NamedTuple, Protocol, Sequence

import numpy as np

from core.config import Config
from core.rank import mmr
from core.recall.pool import RecallPool


class ContestSource(Protocol):
    """What the contest reads of a re-rank (`core.rank.ranking.Ranking` has it)."""

    @property
    def pool(self) -> RecallPool: ...
    @property
    def config(self) -> Config: ...
    @property
    def rows(self) -> Sequence: ...
    @property
    def selection(self) -> mmr.Selection: ...


class Bout(NamedTuple):
    """One pick the row lost."""

    rank: int  # 1-based result rank of the pick
    winner: str  # memory_id picked there
    basis: str  # "final" (first pick: top final score) | "mmr" | "fallback" (every row a duplicate)
    winner_score: float  # the winner's final score (first pick) or mmr score
    score: float | None  # the row's own score on the same basis; None when it was a duplicate
    redundancy: float  # the row's max redundancy against the picks before this one
    redundant_with: str | None  # the earlier pick causing that redundancy
    duplicate: bool

    @property
    def margin(self) -> float | None:
        """How far the row fell short of the winner (winner − row); None when a duplicate."""
        return None if self.score is None else self.winner_score - self.score


def redundancy_to_picks(ranking: ContestSource, row_pos: int) -> np.ndarray:
    """`redundancy(row, pick)` against each pick, in pick order (§5: max of cosine and
    tag_weight · tag Jaccard)."""
    order = list(ranking.selection.order)
    idx = np.array([ranking.rows[p].index for p in [row_pos, *order]], dtype=np.int64)
    tags = mmr.tag_matrix([ranking.pool.chunks[i].tags for i in idx.tolist()])
    red = mmr.redundancy_to(0, ranking.pool.vectors[idx], ranking.pool.static.dims[idx], tags, tags.sum(axis=1),
                            ranking.config.tag_weight)
    return red[1:]


def contest(ranking: ContestSource, row_pos: int) -> tuple[Bout, ...]:
    """Every pick the re-ranked row `row_pos` lost, with both sides' scores (empty if picked)."""
    sel = ranking.selection
    if row_pos in sel.order:
        return ()
    cfg = ranking.config
    lam = cfg.mmr_lambda
    final = ranking.rows[row_pos].final_score
    red = redundancy_to_picks(ranking, row_pos)
    bouts = []
    for pos, step in enumerate(sel.steps):
        winner = ranking.rows[step.row]
        before = red[:pos]
        worst = float(before.max()) if pos else 0.0
        cause = _id(ranking, sel.order[int(before.argmax())]) if pos and worst > 0 else None
        duplicate = pos > 0 and worst >= cfg.duplicate_threshold
        if pos == 0:
            basis, won, own = "final", winner.final_score, final
        elif step.mmr_score is None:  # past the first pick, only fallback fills have no MMR score
            basis, won, own = "fallback", winner.final_score, None
        else:
            basis, won = "mmr", step.mmr_score
            own = None if duplicate else lam * final - (1.0 - lam) * worst
        bouts.append(Bout(pos + 1, _id(ranking, step.row), basis, won, own, worst, cause, duplicate))
    return tuple(bouts)


def _id(ranking: ContestSource, row_pos: int) -> str:
    return ranking.pool.chunks[ranking.rows[row_pos].index].memory_id


def describe(ranking: ContestSource, row_pos: int) -> str:
    """Why a re-ranked, non-duplicate row was not picked, in words that restate the numbers."""
    bouts = contest(ranking, row_pos)
    cfg = ranking.config
    row = ranking.rows[row_pos]
    if not bouts:
        return "no pick was made: the re-rank returned nothing"
    picks = [ranking.rows[p] for p in ranking.selection.order]
    lower = [_id(ranking, p) for p, r in zip(ranking.selection.order, picks) if r.final_score < row.final_score]
    last = bouts[-1]
    parts = [f"its final score {row.final_score:.6f} is #{row_pos + 1} of {len(ranking.rows)} re-ranked rows"]
    if lower:
        parts.append(f"above {len(lower)} of the {len(picks)} results ({', '.join(lower)}): it lost on the "
                     f"diversity penalty, not on relevance")
    else:
        parts.append(f"below all {len(picks)} results")
    if last.basis == "final":
        parts.append(f"top_k={cfg.top_k}: the only pick is the top final score, {last.winner} "
                     f"({last.winner_score:.6f}, {last.margin:.6f} more)")
    elif last.basis == "mmr" and last.score is not None:
        parts.append(
            f"at the last pick (rank {last.rank} of top_k={cfg.top_k}) {last.winner} won with mmr "
            f"{last.winner_score:.4f}; this row had mmr {last.score:.4f} = {cfg.mmr_lambda:g}·{row.final_score:.6f} − "
            f"{1 - cfg.mmr_lambda:g}·{last.redundancy:.4f} (redundancy against {last.redundant_with or 'none'}), "
            f"{last.margin:.4f} short")
    return "not picked by MMR: " + "; ".join(parts)
