"""Production beside the reproduction: ask a running Memsense service the same question
(`POST /v1/memory/search`, SPEC §10) and compare its results with a `Ranking`, position by
position: same id, same order, same `final_score` to 1e-6, and a reason for any difference
when one can be told.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.config import Config
from core.config.memsense_options import memsense_export
from core.errors import MemsenseError
from core.recall.http_post import HttpFailure, failure_error, post_json
from core.recall.timeouts import SERVICE_TIMEOUT_S, check_timeout
from core.redact import redact_url

SCORE_TOLERANCE = 1e-6
DEFAULT_TIMEOUT_S = SERVICE_TIMEOUT_S
SERVICE_FIELD = "--service, or Service in the app's Connect dialog"
"""Where the service's URL is given, named in a message that asks to check or fix it: read by the
CLI and the app alike."""


def service_search(url: str, *, tenant: str, scope: str, user: str, query: str, top_k: int,
                   timeout: float = DEFAULT_TIMEOUT_S) -> list[dict[str, Any]]:
    """The service's results for one search, in its pick order, within `timeout` seconds in all."""
    endpoint = url.rstrip("/") + "/v1/memory/search"
    where = f"the Memsense service at {redact_url(url)}"
    body = {"tenant_id": tenant, "scope": scope, "user_id": user, "query": query, "top_k": top_k}
    try:
        raw = post_json(endpoint, body, timeout=check_timeout(timeout, "--service-timeout"))
    except HttpFailure as exc:
        raise failure_error(exc, where, timeout, longer="--service-timeout",
                            status_fix=f"check that it is a Memsense service and that it reads the database searched "
                            f"here ({SERVICE_FIELD})",
                            is_it=f"is it a Memsense service? ({SERVICE_FIELD})",
                            reach_fix=f"start it or fix its URL ({SERVICE_FIELD})") from None
    try:
        obj = json.loads(raw)
        chunks = obj["data"]["chunks"]
        if not obj.get("ok", True) or not isinstance(chunks, list):
            raise ValueError
    except (ValueError, KeyError, TypeError):
        raise MemsenseError(f"{redact_url(endpoint)} did not answer {{ok, data: {{chunks}}}}; "
                            f"is it a Memsense service? ({SERVICE_FIELD})") from None
    return chunks


@dataclass(frozen=True)
class Line:
    """One result position: production's chunk beside the reproduction's."""

    position: int
    production_id: str | None
    production_score: float | None
    reproduction_id: str | None
    reproduction_score: float | None
    matches: bool
    reason: str  # "" when it matches

    def to_dict(self) -> dict[str, Any]:
        return {"position": self.position, "production": {"memory_id": self.production_id,
                                                          "final_score": self.production_score},
                "reproduction": {"memory_id": self.reproduction_id, "final_score": self.reproduction_score},
                "matches": self.matches, "reason": self.reason}


@dataclass(frozen=True)
class Comparison:
    lines: tuple[Line, ...]
    settings: str = ""  # why the two cannot agree: the reproduction's settings are not production's ("" = they are)

    @property
    def matches(self) -> bool:
        return all(line.matches for line in self.lines)

    @property
    def summary(self) -> str:
        same = sum(line.matches for line in self.lines)
        if self.matches:
            return (f"production and reproduction match: {same}/{len(self.lines)} results, same ids, same order, "
                    f"final_score within {SCORE_TOLERANCE:g}")
        return f"production and reproduction differ: {same}/{len(self.lines)} positions match" + \
            (f"; {self.settings}" if self.settings else "")

    def to_dict(self) -> dict[str, Any]:
        return {"matches": self.matches, "summary": self.summary, "settings": self.settings,
                "lines": [x.to_dict() for x in self.lines]}


def compare(production: list[dict[str, Any]], ranking) -> Comparison:
    """Position by position; the reason for a difference comes from the reproduction's view, or,
    when the reproduction ranks with other settings than Memsense's, from those settings."""
    settings = settings_difference(ranking.config)
    ours = list(ranking.results)
    score_of = {r["memory_id"]: r["final_score"] for r in ours}
    lines = []
    for k in range(max(len(production), len(ours))):
        p = production[k] if k < len(production) else None
        o = ours[k] if k < len(ours) else None
        pid, pscore = (p.get("memory_id"), _num(p.get("final_score"))) if p else (None, None)
        oid, oscore = (o["memory_id"], o["final_score"]) if o else (None, None)
        same = pid == oid and pscore is not None and oscore is not None and abs(pscore - oscore) <= SCORE_TOLERANCE
        reason = "" if same else settings or _reason(p, o, ranking, score_of)
        lines.append(Line(k + 1, pid, pscore, oid, oscore, same, reason))
    return Comparison(tuple(lines), settings)


def settings_difference(cfg: Config) -> str:
    """"" when `cfg` ranks as a Memsense service does (its defaults; `top_k` is sent with each
    search), else why production cannot rank like the reproduction: its search API takes no
    re-rank options, so it always ranks with the defaults."""
    changed = memsense_export(cfg)["needsMemsenseChange"]
    if not changed:
        return ""
    knobs = ", ".join(f"{x['name']} {x['value']} (Memsense: {x['memsense']})" for x in changed[:4]) + \
        (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
    return (f"the reproduction ranks with settings production cannot take ({knobs}): Memsense's search API "
            "takes no re-rank options, so production ranks with its defaults; search with --preset memsense "
            "to compare like with like")


def _num(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _reason(p: dict | None, o: dict | None, ranking, score_of: dict[str, float]) -> str:
    if p is None:
        return "production returned fewer results"
    if o is None:
        return "the reproduction returned fewer results"
    pid, pscore = p.get("memory_id"), _num(p.get("final_score"))
    if pid == o["memory_id"]:
        theirs = p.get("explain") or {}
        their_memory = _num(theirs.get("memory_score"))
        if their_memory is not None and abs(their_memory - _clamped(ranking, pid)) > SCORE_TOLERANCE:
            return (f"memory score {theirs['memory_score']} in production, {_clamped(ranking, pid)} read here "
                    "(promoted or demoted between the two reads)")
        return f"final_score {pscore} in production, {o['final_score']} here: route ranks differ (query embedding?)"
    if pid in score_of and pscore is not None and abs(score_of[pid] - o["final_score"]) <= SCORE_TOLERANCE:
        return f"tie: {pid} and {o['memory_id']} both score {o['final_score']}; the order among ties differs"
    if ranking.pool.index_of(pid) is None and pid not in ranking.pool.user_chunks:
        return f"{pid} is not among the user's active chunks read here (written or changed since?)"
    fate = ranking.fate(pid)
    return f"here {pid} is {fate.status}: {fate.reason}"


def _clamped(ranking, memory_id: str) -> float:
    i = ranking.pool.index_of(memory_id)
    return float(ranking.pool.static.memory_score[i]) if i is not None else float("nan")
