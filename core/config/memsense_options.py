"""A config as a live Memsense can take it (SPEC §10).

Memsense's search API (`POST /v1/memory/search`) takes `top_k` per request and nothing else of
the ranking. Its re-rank function (`hybridRerank`) takes an options object `{alpha, lambda,
duplicateThreshold}`, but the service's search calls it with none, so these three need a
one-line change to Memsense's code (pass the object); everything else (route weights, RRF k, the
tag weight, turn-support cap and factor, the pool and route limits, session-first, fallback fill,
the fusion scheme) is written into its code. The export writes the options object in the
re-rank function's shape and sorts every knob into: the same as Memsense, applies as it is (only
`top_k`), or needs a change to Memsense's code.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

from core.config.schema import EXPORT_NAMES, Config
from core.records import SESSION_ROUTES

PER_REQUEST = ("top_k",)
RERANK_OPTIONS = ("alpha", "mmr_lambda", "duplicate_threshold")
NOT_FOR_MEMSENSE = ("quality_as_of",)  # only read by a scheme Memsense does not run
BEYOND_MEMSENSE = (*(f"route_weights.{r}" for r in SESSION_ROUTES), "distinct_sessions")
"""Knobs of what Memsense does not have at all (SPEC §15): new code, not a changed value."""


def _values(cfg: Config) -> dict[str, Any]:
    out = {f.name: getattr(cfg, f.name) for f in fields(cfg) if f.name != "route_weights"}
    out.update({f"route_weights.{r}": w for r, w in cfg.route_weights.items()})
    return out


def _export_name(name: str) -> str:
    return f"routeWeights.{name.split('.', 1)[1]}" if name.startswith("route_weights.") else EXPORT_NAMES[name]


def memsense_export(cfg: Config) -> dict[str, Any]:
    """The options object, top_k, and each knob's verdict (names as Memsense spells them)."""
    ours, theirs = _values(cfg), _values(Config())
    applies, needs, same = [], [], []
    scheme_knobs = {f.name for f in fields(cfg)} - set(PER_REQUEST) - set(RERANK_OPTIONS) - {
        "scheme", "rrf_k", "tag_weight", "turn_support_cap", "turn_support_factor", "candidate_multiplier",
        "candidate_min", "route_multiplier", "route_min", "session_first", "fallback_fill", "route_weights",
        "distinct_sessions"}
    for name, value in ours.items():
        if name in NOT_FOR_MEMSENSE or (name in scheme_knobs and cfg.scheme == "rrf"):
            continue  # a knob of another scheme: it changes nothing while the scheme is rrf
        entry = {"name": _export_name(name), "value": value, "memsense": theirs[name]}
        if value == theirs[name]:
            same.append(entry["name"])
        elif name in PER_REQUEST:
            applies.append({**entry, "how": "send it as top_k in each POST /v1/memory/search"})
        elif name in RERANK_OPTIONS:
            needs.append({**entry, "how": "its re-rank function takes it in its options object, but the service's "
                                          "search passes none: pass rerankOptions to hybridRerank there"})
        elif name in BEYOND_MEMSENSE:
            needs.append({**entry, "how": "Memsense has no such step: it needs new code (a route over whole sessions "
                                          "whose rank goes to the session chunks, or selection of distinct sessions "
                                          "after its re-rank; SPEC §15)"})
        else:
            needs.append({**entry, "how": "fixed in Memsense's code: change it there"})
    return {
        "summary": summary(applies, needs),
        "rerankOptions": {EXPORT_NAMES[n]: getattr(cfg, n) for n in RERANK_OPTIONS},
        "topK": cfg.top_k,
        "appliesAsIs": applies,
        "needsMemsenseChange": needs,
        "sameAsMemsense": same,
    }


def summary(applies: list[dict[str, Any]], needs: list[dict[str, Any]]) -> str:
    """One true sentence on what it takes to run these settings in Memsense."""
    if needs:
        changes = ", ".join(f"{x['name']} {x['memsense']} -> {x['value']}" for x in needs)
        return f"needs a change to Memsense's code: {changes}" + \
            (f"; {applies[0]['name']} {applies[0]['value']} is sent with each search" if applies else "")
    if applies:
        return f"no code change: send top_k {applies[0]['value']} with each search"
    return "Memsense's defaults: nothing to change"
