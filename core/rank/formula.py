"""One candidate's score as a tree of its formula (SPEC §3-§5), like Elasticsearch's `_explain`.

    pick: MMR = λ · Final − (1 − λ) · Max redund.        (§5; the first pick: top Final)
    Final = round(RRF + turn + α · Memory, 6)           (§3)
      RRF + turn = Own RRF + Turn support               (§4)
        Own RRF = Σ w_r / (k + rank_r)                  (§3; one child per route that found it)
        Turn support = min(cap, factor · Best turn RRF) (§4)
      α · Memory

Every value is read from the chunk's `CandidateRecord` (the numbers of the Results and
Candidate pool tables) or is the product the formula names (α · Memory, λ · Final, (1 − λ) ·
Max redund.); nothing is ranked again. A node whose `adds` is true equals the sum of its
children (Final up to its 6-decimal rounding).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.config import Config
from core.rank.record import CandidateRecord
from core.records import ROUTES

FINAL_ROUNDING = 5e-7
"""How far Final may lie from the sum of its terms: it is rounded to 6 decimals (§3)."""


@dataclass(frozen=True)
class FormulaNode:
    """One term: its name, the formula with the numbers put in, its value and its terms.

    `key`: the glossary key (`core.rank.glossary`) of the record field the value is read from,
    or the route name for a route's share; `adds`: the children sum to `value`."""

    label: str
    value: float | None
    formula: str = ""
    key: str | None = None
    children: tuple["FormulaNode", ...] = ()
    adds: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "value": self.value, "formula": self.formula, "key": self.key}
        if self.children:
            out.update(adds=self.adds, children=[c.to_json() for c in self.children])
        return out


def formula_tree(record: CandidateRecord, cfg: Config, session_first: bool) -> FormulaNode:
    """The record's score as a tree: the MMR step at the root when the chunk was re-ranked
    (picked or not), over Final; the chunk's own fused score alone when it was not re-ranked."""
    own = _own_fused(record, cfg)
    if record.final_score is None or record.rrf_score is None:
        return own
    final = _final(record, cfg, own, session_first)
    label, value, formula, key = _pick(record, cfg)
    terms = _mmr_terms(record, cfg, final)
    if terms is not None:  # MMR scored the pick: its two terms add up to it, Final under λ · Final
        return FormulaNode(label, value, formula, key, children=terms, adds=True)
    return FormulaNode(label, value, formula, key, children=(*_redundancy(record, cfg), final))


def _route_share(route: str, hit: Any, cfg: Config) -> FormulaNode:
    w = cfg.weight(route)
    if not hit.counted:
        why = "weight 0" if w == 0 else f"rank {hit.rank} is below route_limit {cfg.route_limit}"
        return FormulaNode(route, hit.contribution, f"not counted: {why}", key=route)
    formula = (f"{w:g} / ({cfg.rrf_k:g} + {hit.rank})" if cfg.scheme == "rrf"
               else f"its share under the {cfg.scheme} scheme (rank {hit.rank}, raw score {hit.raw_score:.4f})")
    return FormulaNode(route, hit.contribution, formula, key=route)


def _own_fused(record: CandidateRecord, cfg: Config) -> FormulaNode:
    hits = record.route_hits
    shares = tuple(_route_share(r, hits[r], cfg) for r in ROUTES if r in hits)
    if record.turn_support is not None and record.pool_rank is None:  # a session row outside the pool
        return FormulaNode("Own RRF", record.session_rrf_score, "0: a session outside the candidate pool, fetched "
                           "for its turns' support (its route shares below did not count)", key="session_rrf_score",
                           children=shares)
    if cfg.scheme == "quality":  # `core.rank.fusion.quality.fuse`: its shares are the RRF that admitted the row
        return FormulaNode("Own RRF", record.session_rrf_score, "Phase 7's quality score (§9), not a sum over routes: "
                           "the shares below are the hybrid RRF that admitted the row", key="session_rrf_score",
                           children=shares)
    if cfg.scheme == "top_rank_bonus" and record.session_rrf_score is not None:  # §9: RRF + the QMD bonus
        bonus = record.session_rrf_score - sum(h.contribution for h in hits.values())
        shares += (FormulaNode("top-rank bonus", bonus, f"+{cfg.bonus_first:g} when ranked 1st in a counted route, "
                               f"else +{cfg.bonus_top3:g} when 2nd or 3rd (Own RRF less the route shares)"),)
    formula = (f"Σ w_r / (k + rank_r), k = {cfg.rrf_k:g}, over the routes that counted" if cfg.scheme == "rrf"
               else f"the {cfg.scheme} scheme's fused score: the routes' shares added")
    return FormulaNode("Own RRF", record.session_rrf_score, formula, key="session_rrf_score",
                       children=shares, adds=bool(shares))


def _final(record: CandidateRecord, cfg: Config, own: FormulaNode, session_first: bool) -> FormulaNode:
    memory = record.memory_score if record.memory_score is not None else 0.0
    alpha_term = FormulaNode("α · Memory", cfg.alpha * memory, f"{cfg.alpha:g} × {memory:.6g} (Memory: clamp01 of "
                             "the stored memory score, 0.5 when missing)", key="memory_score")
    if session_first and record.turn_support is not None:
        fused = FormulaNode("RRF + turn", record.rrf_score, "Own RRF + Turn support", key="rrf_score",
                            children=(own, _turn(record, cfg)), adds=True)
    else:
        fused = FormulaNode("RRF + turn", record.rrf_score, "Own RRF (no turn support: not a session-first "
                            "session row)", key="rrf_score", children=(own,), adds=True)
    return FormulaNode("Final", record.final_score, f"round(RRF + turn + α · Memory, 6), α = {cfg.alpha:g}",
                       key="final_score", children=(fused, alpha_term), adds=True)


def _turn(record: CandidateRecord, cfg: Config) -> FormulaNode:
    best = record.best_turn_rrf_score
    if best is None:
        formula = "0: no turn of this session is in the candidate pool"
    else:
        formula = (f"min({cfg.turn_support_cap:g}, {cfg.turn_support_factor:g} × {best:.6g}), best turn "
                   f"{record.best_turn_id} of {record.supporting_turn_count} in the pool")
    return FormulaNode("Turn support", record.turn_support, formula, key="turn_support")


def _pick(record: CandidateRecord, cfg: Config) -> tuple[str, float | None, str, str]:
    """(label, value, formula, key) of the MMR step that returned the chunk, or did not."""
    lam = cfg.mmr_lambda
    rank = record.selected_rank
    if rank is None:
        return ("Not picked", None, f"{record.status}: {record.reason}", "status")
    if record.fallback_fill:
        return (f"Pick #{rank}", None, "fallback fill: appended in Final order, every remaining row was a "
                "duplicate", "selected_rank")
    if record.mmr_score is None:
        return (f"Pick #{rank}", None, "the first pick: the top Final, no MMR term", "selected_rank")
    return (f"Pick #{rank}: MMR", record.mmr_score, f"λ · Final − (1 − λ) · Max redund., λ = {lam:g}", "mmr_score")


def _redundancy(record: CandidateRecord, cfg: Config) -> tuple[FormulaNode, ...]:
    """Max redund. of a row MMR did not score (the first pick has none)."""
    if record.max_redundancy is None or record.selected_rank == 1:
        return ()
    against = f" against {record.redundant_with}" if record.redundant_with else ""
    return (FormulaNode("Max redund.", record.max_redundancy, f"the highest similarity to a picked row{against} "
                        f"(a duplicate at ≥ {cfg.duplicate_threshold:g})", key="max_redundancy"),)


def _mmr_terms(record: CandidateRecord, cfg: Config, final: FormulaNode) -> tuple[FormulaNode, ...] | None:
    """λ · Final (Final under it) and −(1 − λ) · Max redund. of a pick MMR scored (they add up
    to its MMR); None for a row MMR did not score."""
    if record.mmr_score is None or record.max_redundancy is None or record.final_score is None:
        return None
    lam = cfg.mmr_lambda
    relevance = FormulaNode("λ · Final", lam * record.final_score, f"{lam:g} × {record.final_score:.6f}",
                            children=(final,))
    penalty = FormulaNode("− (1 − λ) · Max redund.", -(1.0 - lam) * record.max_redundancy,
                          f"−{1.0 - lam:g} × {record.max_redundancy:.6f}, the similarity to {record.redundant_with}",
                          key="max_redundancy")
    return (relevance, penalty)


def adds_up(node: FormulaNode, tolerance: float = 1e-9) -> list[str]:
    """The nodes whose children do not sum to their value (Final within `FINAL_ROUNDING`), as
    "label: value ≠ sum" lines; empty when every sum holds. The tree's own check, for tests and
    `--json` readers alike."""
    out: list[str] = []
    if node.adds and node.value is not None:
        total = sum(c.value for c in node.children if c.value is not None)
        room = FINAL_ROUNDING if node.key == "final_score" else tolerance
        if abs(total - node.value) > room:
            out.append(f"{node.label}: {node.value!r} ≠ {total!r}")
    for child in node.children:
        out.extend(adds_up(child, tolerance))
    return out
