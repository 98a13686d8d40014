"""A naive pure-Python transcription of the whole re-rank (SPEC §3-§5), written straight from
the formulas with dicts and loops. It is the oracle the vectorised `core.rank.rerank` is tested
against, and the baseline the benchmark measures it against.
"""
from __future__ import annotations

import math

from core.config import Config
from core.rank.score import final_score
from core.records import ROUTES


def to_lists(pool) -> dict:
    """The pool as plain Python structures (done once, outside any timing)."""
    return {
        "ids": [c.memory_id for c in pool.chunks],
        "kind": [c.kind for c in pool.chunks],
        "session": [c.session_id for c in pool.chunks],
        "memory_score": [c.memory_score for c in pool.chunks],
        "tags": [set(c.tags) for c in pool.chunks],
        "ranks": pool.ranks.tolist(),
        "vectors": pool.vectors.tolist(),
    }


def _cos(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0 or len(a) != len(b):
        return 0.0
    return min(1.0, max(0.0, sum(x * y for x, y in zip(a, b)) / (na * nb)))


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def naive_rerank(p: dict, cfg: Config) -> list[tuple[str, float]]:
    """Result (memory_id, final_score) pairs, in result order."""
    n = len(p["ids"])
    rrf: dict[int, float] = {}
    routes: dict[int, list[str]] = {}
    for i in range(n):
        for j, route in enumerate(ROUTES):
            rank = p["ranks"][i][j]
            w = cfg.route_weights[route]
            if rank > 0 and rank <= cfg.route_limit and w > 0:
                rrf[i] = rrf.get(i, 0.0) + w / (cfg.rrf_k + rank)
                routes.setdefault(i, []).append(route)
    pool = sorted(rrf, key=lambda i: (-rrf[i], p["ids"][i]))[: cfg.candidate_limit]
    rows: list[tuple[int, float]] = []
    if cfg.session_first:
        best: dict[str, float] = {}
        for i in pool:
            if p["kind"][i] == "turn":
                s = p["session"][i]
                best[s] = max(best.get(s, 0.0), rrf[i])
        in_pool = set(pool)
        for i in range(n):
            if p["kind"][i] == "session" and (i in in_pool or p["session"][i] in best):
                own = rrf[i] if i in in_pool else 0.0
                support = min(cfg.turn_support_cap, cfg.turn_support_factor * best[p["session"][i]]) \
                    if p["session"][i] in best else 0.0
                rows.append((i, own + support))
    if not rows:
        rows = [(i, rrf[i]) for i in pool]
    scored = sorted(((final_score(r, p["memory_score"][i], cfg.alpha), i) for i, r in rows),
                    key=lambda t: (-t[0], p["ids"][t[1]]))
    if not scored:
        return []
    selected = [scored[0]]
    remaining = scored[1:]
    while remaining and len(selected) < cfg.top_k:
        best_row, best_mmr = None, -math.inf
        for k, (f, i) in enumerate(remaining):
            red = max(max(_cos(p["vectors"][i], p["vectors"][s]), cfg.tag_weight * _jaccard(p["tags"][i], p["tags"][s]))
                      for _, s in selected)
            if red >= cfg.duplicate_threshold:
                continue
            mmr = cfg.mmr_lambda * f - (1 - cfg.mmr_lambda) * red
            if mmr > best_mmr:
                best_row, best_mmr = k, mmr
        if best_row is None:
            if not cfg.fallback_fill:
                break
            best_row = 0
        selected.append(remaining.pop(best_row))
    return [(p["ids"][i], f) for f, i in selected]
