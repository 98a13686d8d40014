"""Replay Memsense-format candidate rows (a pool logged by the service) through the final
score and MMR stages (SPEC §7): `{name, top_k, options{alpha, lambda, duplicateThreshold}, rows}`.
"""
from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from core.rank import mmr
from core.config import Config
from core.errors import MemsenseError
from core.rank.score import clamp01, final_score

OPTION_FIELDS = {"alpha": "alpha", "lambda": "mmr_lambda", "duplicateThreshold": "duplicate_threshold"}


def _embedding(value: Any, where: str) -> list[float] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise MemsenseError(f"{where}: embedding string is not a JSON list of numbers") from None
    if not isinstance(value, list) or not all(_is_number(x) for x in value):
        raise MemsenseError(f"{where}: embedding must be a list of numbers, a \"[..]\" string or null")
    bad = next((i for i, x in enumerate(value) if not math.isfinite(x)), None)
    if bad is not None:
        raise MemsenseError(f"{where}: embedding[{bad}] is {value[bad]!r}; every element must be a finite number")
    return [float(x) for x in value]


NUMBER_TEXT = re.compile(r"[-+0-9.eE,\s]*")
"""What the fast path reads: digits, signs, points, exponents, commas, spaces. Anything else
(NaN, Infinity, quotes, brackets) goes to the exact per-row path and its message."""


def case_vectors(values: list[Any], wheres: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every row's embedding as unit rows (zero-padded to the widest) and their dimensions.

    Memsense logs embeddings as `"[..]"` strings (pgvector's text) or lists: all strings of a case
    are read by one C parse, lists by one type scan each. Whatever the fast path cannot read
    exactly is read row by row by `_embedding`, which names the row and the problem.
    """
    vectors: list[np.ndarray | None] = [None] * len(values)
    texts = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            texts.append(i)
        elif isinstance(v, list) and set(map(type, v)) <= {int, float}:
            vectors[i] = np.array(v, dtype=np.float64)
        elif v is not None:
            vectors[i] = np.array(_embedding(v, wheres[i]))  # raises with the reason
    if texts:
        for i, vec in zip(texts, _parse_texts([values[i] for i in texts])):
            vectors[i] = vec if vec is not None else np.array(_embedding(values[i], wheres[i]))
    for i, vec in enumerate(vectors):
        if vec is not None and not np.isfinite(vec).all():
            _embedding(values[i], wheres[i])  # raises: names the element that is not finite
    dims = np.array([0 if v is None else len(v) for v in vectors], dtype=np.int32)
    out = np.zeros((len(values), max(int(dims.max(initial=0)), 1)))
    for i, vec in enumerate(vectors):
        if vec is not None and len(vec):
            out[i, : len(vec)] = vec
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))
    dims[norms == 0] = 0
    out[norms > 0] /= norms[norms > 0, None]
    return out, dims


def _parse_texts(texts: list[str]) -> list[np.ndarray | None]:
    """`"[..]"` strings parsed in one pass; None for each string this fast path cannot vouch for."""
    inner = [t.strip() for t in texts]
    if not all(t[:1] == "[" and t[-1:] == "]" for t in inner):
        return [None] * len(texts)
    inner = [t[1:-1] for t in inner]
    counts = [t.count(",") + 1 if t.strip() else 0 for t in inner]
    joined = ",".join(t for t, n in zip(inner, counts) if n)
    if not NUMBER_TEXT.fullmatch(joined):
        return [None] * len(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a short read is caught by the count below
        flat = np.fromstring(joined, dtype=np.float64, sep=",") if joined else np.zeros(0)
    if len(flat) != sum(counts):
        return [None] * len(texts)
    return np.split(flat, np.cumsum(counts)[:-1])


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _names(value: Any, field: str, where: str) -> tuple[str, ...]:
    """A list of strings (tags, routes); null or absent is empty. A bare string is refused,
    not split into its characters."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise MemsenseError(f"{where}: {field} must be a list of strings such as [\"music\"] (or null), got {value!r:.60}")
    return tuple(value)


def _row(row: Any, where: str) -> tuple[str, float, Any, tuple[str, ...], tuple[str, ...]]:
    """(memory_id, rrf_score, score, tags, routes) of one row, each checked."""
    if not isinstance(row, dict) or "memory_id" not in row or "rrf_score" not in row:
        raise MemsenseError(f"{where}: needs memory_id and rrf_score")
    mid = row["memory_id"]
    if not (isinstance(mid, str) and mid.strip()) and not (_is_number(mid) and float(mid).is_integer()):
        raise MemsenseError(f"{where}: memory_id must be non-empty text, got {mid!r:.60}")
    rrf = row["rrf_score"]
    if not _is_number(rrf) or not math.isfinite(rrf):
        raise MemsenseError(f"{where}: rrf_score must be a finite number, got {rrf!r:.60}")
    score = row.get("score")
    if _is_number(score) and not math.isfinite(score):
        raise MemsenseError(f"{where}: score must be a finite number or null, got {score!r}")
    return str(mid), float(rrf), score, _names(row.get("tags"), "tags", where), _names(row.get("routes"), "routes", where)


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
    if not isinstance(name, (str, int)) or isinstance(name, bool):
        raise MemsenseError(f"case name must be text, got {name!r:.60}")
    try:
        cfg = case_config(case, base)
    except MemsenseError as exc:
        raise MemsenseError(f"case {name!r}: {exc}") from None
    rows, seen = [], set()
    for n, raw in enumerate(case["rows"]):
        where = f"case {name!r} row {n}"
        mid, rrf, score, tags, routes = _row(raw, where)
        if mid in seen:
            raise MemsenseError(f"{where}: memory_id {mid!r} appears twice in the case; a pool holds each memory once")
        seen.add(mid)
        rows.append((final_score(rrf, score, cfg.alpha), mid, raw, where, tags, routes))
    rows.sort(key=lambda r: (-r[0], r[1]))
    unit, dims = case_vectors([r[2].get("embedding") for r in rows], [r[3] for r in rows])
    tags = mmr.tag_matrix([r[4] for r in rows])
    sel = mmr.select(np.array([r[0] for r in rows]), unit, dims, tags, top_k=cfg.top_k,
                     mmr_lambda=cfg.mmr_lambda, duplicate_threshold=cfg.duplicate_threshold,
                     tag_weight=cfg.tag_weight, fallback_fill=cfg.fallback_fill)
    results = []
    for pos, step in enumerate(sel.steps):
        fs, mid, row, _, _, routes = rows[step.row]
        results.append({
            "memory_id": mid,
            "final_score": fs,
            "rrf_score": row["rrf_score"],
            "routes": list(routes),
            "explain": {
                "rrf_score": row["rrf_score"],
                "memory_score": clamp01(row.get("score")),
                "alpha": cfg.alpha,
                "routes": list(routes),
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
