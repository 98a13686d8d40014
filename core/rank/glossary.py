"""Every term the app and the CLI show about a candidate, defined once (SPEC §2-§6).

A term's `key` is its field in `core.rank.record.CandidateRecord` and its key in every JSON
output (`memsense search/explain --json`); its `label` heads the column of every table that
shows it (Results, Candidate pool) and names it in the Explain panel; its `formula` is the
tooltip. One key, one label, one quantity: "RRF" alone names nothing, since a session row's
fused score with and without its turn support differ.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from core.config.schema import KNOBS


class Term(NamedTuple):
    """One quantity: JSON key / record field, column label, formula, SPEC section, unit."""

    key: str
    label: str
    formula: str
    section: str
    unit: str

    def tooltip(self) -> str:
        """`label: formula (SPEC §n; unit; key)`, the header tooltip of every column that shows it."""
        return f"{self.label}: {self.formula} (SPEC {self.section}; {self.unit}; key {self.key})"


GLOSSARY: tuple[Term, ...] = (
    Term("memory_id", "Chunk", "the chunk's id (user:session:part)", "§1", "id"),
    Term("session_id", "Session", "the session the chunk belongs to", "§1", "id"),
    Term("kind", "Kind", "session chunk or turn chunk", "§1", "session | turn"),
    Term("status", "Fate", "what happened to the chunk for this query and these settings: selected, "
         "fallback_fill, duplicate, same_session, outranked, supporting_turn, dropped, cut_from_pool, beyond_route_limit, "
         "zero_weight or absent", "§6, §13", "status"),
    Term("reason", "Why", "the fate in words, with the numbers that decided it", "§6", "text"),
    Term("duplicate_of", "Duplicate of", "the picked row it was skipped as a duplicate of "
         "(Max redund. ≥ duplicate_threshold), or, with selection by session, the earlier row of its session",
         "§5", "id"),
    Term("supports_session", "Supports", "the session a turn chunk in the pool lends its support to", "§4", "id"),
    Term("selected_rank", "#", "1-based place in the results, in MMR pick order (1 = the first pick, "
         "fallback fills included); empty when not returned", "§5", "place"),
    Term("pool_rank", "Pool #", "1-based place in the candidate pool by Own RRF, ties by id; empty for a "
         "session fetched only for its turns' support, or a chunk outside the pool", "§3", "place"),
    Term("session_rrf_score", "Own RRF", "Σ w_r / (k + rank_r) over the routes that counted: the chunk's own "
         "fused score (Memsense's session_rrf_score on a session row; 0 for a session fetched only for its "
         "turns; the scheme's score under a non-RRF scheme, §9)", "§3, §4", "score"),
    Term("turn_support", "Turn support", "min(cap, factor · Best turn RRF) on a session row of a session-first "
         "ranking; 0 when no turn of the session is in the pool; empty on other rows", "§4", "score"),
    Term("rrf_score", "RRF + turn", "Own RRF + Turn support: the fused score before the memory term "
         "(Memsense's rrf_score); empty on a row that was not re-ranked", "§3, §4", "score"),
    Term("memory_score", "Memory", "clamp01(stored memory score); 0.5 when missing or not a number", "§3",
         "score in [0, 1]"),
    Term("final_score", "Final", "round(RRF + turn + alpha · Memory, 6); MMR orders and picks by it; empty "
         "on a row that was not re-ranked", "§3", "score"),
    Term("mmr_score", "MMR", "lambda · Final − (1 − lambda) · Max redund. at its pick; empty for the first "
         "pick (top Final), fallback fills and rows not picked", "§5", "score"),
    Term("max_redundancy", "Max redund.", "max over the rows picked before it (every pick, for a row not "
         "picked) of max(cos(vec_full), tag_weight · tag Jaccard)", "§5", "similarity in [0, 1]"),
    Term("redundant_with", "Against", "the picked row that caused Max redund.", "§5", "id"),
    Term("fallback_fill", "Fallback", "appended in Final order because every remaining row was a duplicate",
         "§5", "yes / no"),
    Term("routes", "Routes", "sorted names of the routes that counted, then turn_support when Turn support "
         "> 0", "§3, §4", "route names"),
    Term("supporting_turn_count", "Turns", "turn chunks of the session in the candidate pool", "§4", "count"),
    Term("best_turn_id", "Best turn", "the session's supporting turn with the highest Own RRF (ties by id)",
         "§4", "id"),
    Term("best_turn_rrf_score", "Best turn RRF", "Own RRF of the best supporting turn", "§4", "score"),
    Term("best_turn_routes", "Best turn routes", "the routes that counted for the best supporting turn", "§4",
         "route names"),
    Term("route_hits", "Route hits", "rank, raw score and RRF share in every route that found the chunk",
         "§2, §3, §6", "per route"),
)
"""The record's terms in the order the Explain panel and the JSON give them."""

ROUTE_GLOSSARY: tuple[Term, ...] = (
    Term("rank", "Route rank", "1-based rank in that route's list (1 = best; ties by id)", "§2", "place"),
    Term("raw_score", "Raw score", "the route's own score: cosine for dense and facet routes, BM25 or "
         "ts_rank_cd for lexical", "§2", "score"),
    Term("contribution", "RRF share", "w_r / (k + Route rank) when the route counted, else 0 (under RRF the "
         "shares sum to the chunk's fused score)", "§3", "score"),
    Term("counted", "Counted", "the route is weighted above 0 and ranked the chunk within route_limit", "§2, §3",
         "yes / no"),
)
"""The terms of one route hit (`route_hits.<route>.<key>`)."""

METRIC_GLOSSARY: tuple[Term, ...] = (
    Term("recall_any@k", "recall_any@k", "1 when some gold session is among the first k results, else 0; averaged "
         "over the questions", "§8", "share in [0, 1]"),
    Term("recall_all@k", "recall_all@k", "1 when every gold session is among the first k results, else 0 (the "
         "multi-session recall); averaged over the questions", "§8", "share in [0, 1]"),
    Term("recall@k", "recall@k", "|gold ∩ first k results| / |gold|, a session counted at its first result",
         "§8", "share in [0, 1]"),
    Term("mrr", "mrr", "1 / place of the first gold result (0 when none), over the whole list", "§8", "score in [0, 1]"),
    Term("ndcg@k", "ndcg@k", "DCG@k / IDCG@k with DCG@k = Σ_{i≤k} grade_i / log2(i + 1), IDCG the same sum over "
         "the grades sorted best first", "§8", "score in [0, 1]"),
    Term("pass", "Pass", "a judged question passes when its metric (recall_all@k by default) reaches 1: every "
         "gold session returned", "§8", "pass | fail"),
)
"""The evaluation's terms (Cases, Evaluation, Auto-tune); `k` is the cut-off shown after @."""

WHATIF_GLOSSARY: tuple[Term, ...] = (
    Term("knob", "Knob", "the setting moved, named as in config files", "§6", "setting"),
    Term("now", "Now", "the setting's current value", "§6", "value"),
    Term("change_to", "Change to", "the smallest single move of this knob, searched outward from Now, after "
         "which the pinned chunk is returned", "§6", "value"),
    Term("rank_with_change", "Rank", "the pinned chunk's place in the results with this one change (a real re-rank of the "
         "cached pool)", "§5, §6", "place"),
    Term("pushes_out", "Pushes out", "the results of the current settings that this change drops", "§5, §6",
         "ids"),
    Term("on_the_set", "On the set", "the change judged on the chosen question set (SPEC §16): the metric over every "
         "question before → after; 'harmful' when it is lower at paired p < 0.05 (listed last, Apply asks first)",
         "§16", "metric"),
)
"""The columns of Why not?'s "what would it take" table (`core.rank.whatif`)."""

GROUP_SECTIONS: dict[str, str] = {"Route weights": "§2, §3", "Fusion and score": "§3", "Turn support": "§4",
                                  "Diversity (MMR)": "§5"}
"""The SPEC section of each group of sliders."""

KNOB_GLOSSARY: tuple[Term, ...] = tuple(
    Term(k.name, k.label, k.help, GROUP_SECTIONS.get(k.group, "§3"), f"setting, {k.low:g} to {k.high:g}")
    for k in KNOBS.values() if k.group)
"""The settings the sliders show, from their one declaration (`core.config.knobs`)."""

SECTIONS: tuple[tuple[str, tuple[Term, ...]], ...] = (
    ("Candidate", GLOSSARY), ("Route hit", ROUTE_GLOSSARY), ("Evaluation", METRIC_GLOSSARY),
    ("What would it take", WHATIF_GLOSSARY), ("Setting", KNOB_GLOSSARY))
"""Every term the app shows, by where it appears: what the Glossary window lists."""

TERMS: dict[str, Term] = {t.key: t for t in GLOSSARY}
ROUTE_TERMS: dict[str, Term] = {t.key: t for t in ROUTE_GLOSSARY}


def label(key: str) -> str:
    """The column label of a record term."""
    return TERMS[key].label


def tooltip(key: str) -> str:
    """The header tooltip of a record term."""
    return TERMS[key].tooltip()


def _norm(text: str) -> str:
    return re.sub(r"@\s*\d+\b", "@k", " ".join(text.split()).casefold())


def find(name: str) -> Term | None:
    """The term a column header, label or key names (`recall_all@4` is `recall_all@k`); the
    candidate's terms first; None when no term has that name."""
    wanted = _norm(name)
    for _, terms in SECTIONS:
        for term in terms:
            if wanted in (_norm(term.label), _norm(term.key)):
                return term
    return None


def term_at(path: Sequence[str]) -> Term | None:
    """The term a field of a record's JSON holds (`CandidateRecord.to_json`): a top-level key, or
    `route_hits.<route>.<key>`; None for any other field."""
    if len(path) == 1:
        return TERMS.get(path[0])
    if len(path) == 3 and path[0] == "route_hits":
        return ROUTE_TERMS.get(path[2])
    return None
