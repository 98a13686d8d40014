"""Replay Memsense-format candidate rows (a pool logged by the service) through the final
score and MMR stages (SPEC §7): `{name, top_k, options{alpha, lambda, duplicateThreshold}, rows}`.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np

from core import mmr
from core.config import Config
from core.errors import MemsenseError
from core.rerank import clamp01, final_score
from core.pool import unit_rows

OPTION_FIELDS = {"alpha": "alpha", "lambda": "mmr_lambda", "duplicateThreshold": "duplicate_threshold"}


def _embedding(value: Any, where: str) -> list[float] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise MemsenseError(f"{where}: embedding string is not a JSON list of numbers") from None
    if not isinstance(value, list) or not all(isinstance(x, (int, float)) for x in value):
        raise MemsenseError(f"{where}: embedding must be a list of numbers, a \"[..]\" string or null")
    return [float(x) for x in value]


def case_config(case: dict[str, Any], base: Config | None = None) -> Config:
    options = case.get("options") or {}
    if not isinstance(options, dict):
        raise MemsenseError(f"case {case.get('name')!r}: options must be an object")
    unknown = sorted(set(options) - set(OPTION_FIELDS))
    if unknown:
        raise MemsenseError(f"case {case.get('name')!r}: unknown option(s) {', '.join(unknown)}; "
                            f"known: {', '.join(OPTION_FIELDS)}")
    changes = {OPTION_FIELDS[k]: v for k, v in options.items()}
    top_k = case.get("top_k", (base or Config()).top_k)
    return replace(base or Config(), top_k=top_k, **changes)


def replay_case(case: dict[str, Any], base: Config | None = None) -> dict[str, Any]:
    """Re-rank one case; returns `{name, results: [{memory_id, final_score, explain}]}`."""
    if not isinstance(case, dict) or not isinstance(case.get("rows"), list):
        raise MemsenseError("a case is an object with a 'rows' list (and optional name, top_k, options)")
    name = case.get("name", "")
    cfg = case_config(case, base)
    rows = []
    for n, row in enumerate(case["rows"]):
        where = f"case {name!r} row {n}"
        if not isinstance(row, dict) or "memory_id" not in row or "rrf_score" not in row:
            raise MemsenseError(f"{where}: needs memory_id and rrf_score")
        rrf = row["rrf_score"]
        if isinstance(rrf, bool) or not isinstance(rrf, (int, float)) or rrf != rrf:
            raise MemsenseError(f"{where}: rrf_score must be a number, got {rrf!r}")
        rows.append((final_score(float(rrf), row.get("score"), cfg.alpha), str(row["memory_id"]), row, where))
    rows.sort(key=lambda r: (-r[0], r[1]))
    unit, dims = unit_rows([_embedding(r[2].get("embedding"), r[3]) for r in rows])
    tags = mmr.tag_matrix([tuple(r[2].get("tags") or ()) for r in rows])
    sel = mmr.select(np.array([r[0] for r in rows]), unit, dims, tags, top_k=cfg.top_k,
                     mmr_lambda=cfg.mmr_lambda, duplicate_threshold=cfg.duplicate_threshold,
                     tag_weight=cfg.tag_weight, fallback_fill=cfg.fallback_fill)
    results = []
    for pos, step in enumerate(sel.steps):
        fs, mid, row, _ = rows[step.row]
        results.append({
            "memory_id": mid,
            "final_score": fs,
            "rrf_score": row["rrf_score"],
            "routes": list(row.get("routes") or []),
            "explain": {
                "rrf_score": row["rrf_score"],
                "memory_score": clamp01(row.get("score")),
                "alpha": cfg.alpha,
                "routes": list(row.get("routes") or []),
                "diversity": {"lambda": cfg.mmr_lambda, "duplicate_threshold": cfg.duplicate_threshold,
                              "selected_rank": sel.selected_rank[pos]},
                "mmr": mmr.step_explain(step, lambda r: None if r is None else rows[r][1]),
            },
        })
    return {"name": name, "results": results}


def replay(data: Any, base: Config | None = None) -> list[dict[str, Any]]:
    """A case object or a list of them."""
    cases = data if isinstance(data, list) else [data]
    return [replay_case(c, base) for c in cases]
