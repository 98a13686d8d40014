"""One record per candidate: every number shown about a chunk for one ranking (SPEC §3-§6).

The Results and Candidate pool tables, the Explain panel, the pool CSV and `memsense
search/explain --json` all read a `CandidateRecord`, whose fields are the keys of
`core.rank.glossary`, so a label means one quantity wherever it appears.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple, Protocol

import numpy as np

from core.config import Config
from core.rank.explain import Fate
from core.rank.glossary import TERMS
from core.rank.mmr import Selection
from core.records import ROUTES


class RecordSource(Protocol):
    """What a record reads of a re-rank (`core.rank.ranking.Ranking` has it all)."""

    @property
    def pool(self) -> Any: ...  # the recall pool: chunks, ranks, scores, static arrays, index_of

    @property
    def config(self) -> Config: ...

    @property
    def fused(self) -> np.ndarray: ...

    @property
    def contributions(self) -> np.ndarray: ...

    @property
    def live(self) -> np.ndarray: ...

    @property
    def candidates(self) -> np.ndarray: ...

    @property
    def session_first(self) -> bool: ...

    @property
    def rows(self) -> Sequence[Any]: ...  # `core.rank.ranking.Row`s

    @property
    def selection(self) -> Selection: ...

    @property
    def row_of_index(self) -> Mapping[int, int]: ...

    @property
    def candidate_rank(self) -> Mapping[int, int]: ...

    def fate(self, memory_id: str) -> Fate: ...


FateOf = Callable[[Any, str], Fate]
"""How a record reads a chunk's fate: `(ranking, memory_id) -> Fate`."""


def ranking_fate(ranking: RecordSource, memory_id: str) -> Fate:
    """The ranking's own "why not" (`core.rank.ranking.Ranking.fate`)."""
    return ranking.fate(memory_id)


class RouteHit(NamedTuple):
    """A route that found the chunk (`core.rank.glossary.ROUTE_GLOSSARY`)."""

    rank: int
    raw_score: float
    contribution: float
    counted: bool


@dataclass(frozen=True)
class CandidateRecord:
    """What one ranking did with one chunk; fields named and defined by `core.rank.glossary`.

    Empty (None) is "does not apply": a pipeline step the chunk did not reach, or a term of
    session rows on another row."""

    memory_id: str
    session_id: str | None
    kind: str | None
    status: str
    reason: str
    duplicate_of: str | None
    supports_session: str | None
    selected_rank: int | None
    pool_rank: int | None
    session_rrf_score: float | None
    turn_support: float | None
    rrf_score: float | None
    memory_score: float | None
    final_score: float | None
    mmr_score: float | None
    max_redundancy: float | None
    redundant_with: str | None
    fallback_fill: bool
    routes: tuple[str, ...]
    supporting_turn_count: int | None
    best_turn_id: str | None
    best_turn_rrf_score: float | None
    best_turn_routes: tuple[str, ...]
    route_hits: Mapping[str, RouteHit]

    def value(self, key: str) -> Any:
        """A term's value by its glossary key."""
        if key not in TERMS:
            raise KeyError(f"{key!r} is not a term of the glossary")
        return getattr(self, key)

    def to_json(self) -> dict[str, Any]:
        """Every term under its key, in glossary order (lists for tuples, route hits as objects)."""
        out: dict[str, Any] = {}
        for name in _FIELDS:
            v = getattr(self, name)
            if name == "route_hits":
                v = {route: hit._asdict() for route, hit in v.items()}
            elif isinstance(v, tuple):
                v = list(v)
            out[name] = v
        return out


def route_hits(ranking: RecordSource, index: int) -> dict[str, RouteHit]:
    """Rank, raw score and RRF share of one pool row in every route that found it."""
    ranks, raw = ranking.pool.ranks[index].tolist(), ranking.pool.scores[index].tolist()
    share, live = ranking.contributions[index].tolist(), ranking.live[index].tolist()
    return {route: RouteHit(ranks[j], raw[j], share[j], live[j]) for j, route in enumerate(ROUTES) if ranks[j]}


def pool_order(ranking: RecordSource) -> list[int]:
    """The pool rows the Candidate pool lists: the candidate pool in pool order, then the session
    rows fetched for their turns' support that were not in the pool themselves."""
    pooled = [int(i) for i in ranking.candidates]
    seen = set(pooled)
    return pooled + [r.index for r in ranking.rows if r.index not in seen]


def candidate_record(ranking: RecordSource, memory_id: str, fate_of: FateOf = ranking_fate) -> CandidateRecord:
    """The record of any chunk of the user for this ranking; its fate read by `fate_of` (the
    app passes one that never deepens a pool on the UI thread)."""
    fate = fate_of(ranking, memory_id)
    base: dict[str, Any] = {**_NOTHING, "memory_id": memory_id, "status": fate.status, "reason": fate.reason,
                            "duplicate_of": fate.duplicate_of, "supports_session": fate.supports_session}
    i = ranking.pool.index_of(memory_id)
    if i is not None:
        base.update(scores_of(ranking, i))
    return CandidateRecord(**base)


def scores_of(ranking: RecordSource, i: int) -> dict[str, Any]:
    """The record's terms but the fate for pool row i, by key (Memsense's result fields, §6,
    read these without working out the fate)."""
    pos = ranking.row_of_index.get(i)
    out = _pool_terms(ranking, i, routes=pos is None)
    if pos is not None:
        out.update(_row_terms(ranking, pos))
    return out


_FIELDS = tuple(f.name for f in fields(CandidateRecord))
_NOTHING: dict[str, Any] = dict.fromkeys(_FIELDS) | {
    "fallback_fill": False, "routes": (), "best_turn_routes": (), "route_hits": {}}
"""Every term of a chunk no step reached: empty, or no routes and not a fallback fill."""


def _pool_terms(ranking: RecordSource, i: int, routes: bool) -> dict[str, Any]:
    """What the pool says of row i: its place, own fused score, memory score and (`routes`: a
    row not re-ranked, whose routes no row names) the routes that counted."""
    chunk = ranking.pool.chunks[i]
    out = {"session_id": chunk.session_id, "kind": chunk.kind, "pool_rank": ranking.candidate_rank.get(i),
           "session_rrf_score": float(ranking.fused[i]), "memory_score": float(ranking.pool.static.memory_score[i]),
           "route_hits": route_hits(ranking, i)}
    if routes:
        live = ranking.live[i].tolist()
        out["routes"] = tuple(sorted(r for j, r in enumerate(ROUTES) if live[j]))
    return out


def _row_terms(ranking: RecordSource, pos: int) -> dict[str, Any]:
    """What the re-rank and MMR say of re-ranked row `pos`."""
    row = ranking.rows[pos]
    sel = ranking.selection
    out: dict[str, Any] = {"rrf_score": row.rrf_score, "final_score": row.final_score, "routes": row.routes}
    if ranking.session_first:
        best = row.best_turn
        out.update(session_rrf_score=row.session_rrf_score, turn_support=row.turn_support,
                   supporting_turn_count=row.supporting_turn_count, best_turn_routes=row.best_turn_routes,
                   best_turn_id=None if best is None else ranking.pool.chunks[best].memory_id,
                   best_turn_rrf_score=None if best is None else float(ranking.fused[best]))
    else:
        out.update(session_rrf_score=row.rrf_score)
    if pos in sel.order:
        place = sel.order.index(pos)
        step = sel.steps[place]
        out.update(selected_rank=place + 1, mmr_score=step.mmr_score, max_redundancy=step.max_redundancy,
                   fallback_fill=step.fallback, redundant_with=_row_id(ranking, step.redundant_with))
    else:
        cause = int(sel.redundant_with[pos])
        out.update(max_redundancy=float(sel.max_redundancy[pos]), redundant_with=_row_id(ranking, cause if cause >= 0 else None))
    return out


def _row_id(ranking: RecordSource, row: int | None) -> str | None:
    return None if row is None else ranking.pool.chunks[ranking.rows[row].index].memory_id
