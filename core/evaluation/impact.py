"""Impact of a config change on unjudged queries (SPEC §14).

For configs A and B and one query with top-k lists `A_k`, `B_k` (memory ids, in order):
overlap@k = |A_k ∩ B_k| / k; entered = B_k \\ A_k; left = A_k \\ B_k; the lists are "same set"
and "same order" or not; and rank-biased overlap (Webber, Moffat and Zobel 2010, "A similarity
measure for indefinite rankings", eq. 32) in its extrapolated form RBO_ext with p = 0.9,
evaluated to the lists' depth. Totals: mean overlap@k and RBO, the shares of queries whose set
and whose order changed, the memories that entered or left most often, the queries that moved most.
"""
from __future__ import annotations

import json
from pathlib import Path
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from core.config import Config
from core.errors import Cancelled, MemsenseError
from core.files import read_text
from core.rank.rerank import rerank
from core.recall.pool import RecallPool

RBO_P = 0.9
Recall = Callable[[str, str, int], RecallPool]
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Query:
    user_id: str
    text: str


def rbo_ext(a: Sequence[str], b: Sequence[str], p: float = RBO_P) -> float:
    """Extrapolated rank-biased overlap of two rankings without repeats (eq. 32 of Webber et al.).

    With s = the shorter length, l = the longer (`n` below) and X_d = |a[:d] ∩ b[:d]| (past s, the shorter
    list's items only): RBO_ext = (1-p)/p · (Σ_{d≤l} X_d/d · p^d + Σ_{s<d≤l} X_s (d-s)/(s d) · p^d)
    + ((X_l - X_s)/l + X_s/s) · p^l. Two empty lists are identical (1.0); one empty list shares
    nothing with the other (0.0)."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, n = len(short), len(long_)
    if n == 0:
        return 1.0
    if s == 0:
        return 0.0
    seen_short: set[str] = set()
    seen_long: set[str] = set()
    overlap = 0
    x = [0] * (n + 1)  # x[d] = X_d
    for d in range(1, n + 1):
        item_l = long_[d - 1]
        if d <= s:
            item_s = short[d - 1]
            if item_s == item_l:
                overlap += 1
            else:
                overlap += (item_s in seen_long) + (item_l in seen_short)
            seen_short.add(item_s)
        else:
            overlap += item_l in seen_short
        seen_long.add(item_l)
        x[d] = overlap
    total = sum(x[d] / d * p ** d for d in range(1, n + 1))
    total += sum(x[s] * (d - s) / (s * d) * p ** d for d in range(s + 1, n + 1))
    return (1 - p) / p * total + ((x[n] - x[s]) / n + x[s] / s) * p ** n


@dataclass(frozen=True)
class QueryImpact:
    """One query's top k under A and under B."""

    user_id: str
    query: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    k: int

    @property
    def overlap(self) -> float:
        return len(set(self.a) & set(self.b)) / self.k

    @property
    def rbo(self) -> float:
        return rbo_ext(self.a, self.b)

    @property
    def entered(self) -> tuple[str, ...]:
        return tuple(m for m in self.b if m not in set(self.a))

    @property
    def left(self) -> tuple[str, ...]:
        return tuple(m for m in self.a if m not in set(self.b))

    @property
    def moved(self) -> tuple[tuple[str, int, int], ...]:
        """(memory id, 1-based rank under A, under B) of each memory in both lists at another
        rank, the largest move first (ties: the better rank under A)."""
        rank_b = {m: r for r, m in enumerate(self.b, start=1)}
        moves = [(m, r, rank_b[m]) for r, m in enumerate(self.a, start=1) if m in rank_b and rank_b[m] != r]
        return tuple(sorted(moves, key=lambda t: (-abs(t[2] - t[1]), t[1])))

    @property
    def same_set(self) -> bool:
        return set(self.a) == set(self.b)

    @property
    def same_order(self) -> bool:
        return self.a == self.b

    def to_json(self) -> dict:
        return {"user_id": self.user_id, "query": self.query, "a": list(self.a), "b": list(self.b),
                f"overlap@{self.k}": self.overlap, "rbo": self.rbo, "entered": list(self.entered),
                "left": list(self.left),
                "moved": [{"memory_id": m, "a": ra, "b": rb} for m, ra, rb in self.moved], "same_set": self.same_set, "same_order": self.same_order}


@dataclass(frozen=True)
class Impact:
    """Every query's impact and the totals of SPEC §14."""

    k: int
    queries: tuple[QueryImpact, ...]

    def totals(self, most: int = 10) -> dict:
        n = len(self.queries) or 1
        entered = Counter(m for q in self.queries for m in q.entered)
        left = Counter(m for q in self.queries for m in q.left)
        movers = sorted(self.queries, key=lambda q: (q.rbo, q.overlap, q.user_id, q.query))[:most]
        return {"queries": len(self.queries), "k": self.k,
                f"mean_overlap@{self.k}": sum(q.overlap for q in self.queries) / n,
                "mean_rbo": sum(q.rbo for q in self.queries) / n,
                "changed_set": sum(not q.same_set for q in self.queries) / n,
                "changed_order": sum(not q.same_order for q in self.queries) / n,
                "entered_most": entered.most_common(most), "left_most": left.most_common(most),
                "moved_most": [{"user_id": q.user_id, "query": q.query, "rbo": q.rbo, f"overlap@{self.k}": q.overlap}
                               for q in movers]}

    def to_json(self) -> dict:
        return {"totals": self.totals(), "per_query": [q.to_json() for q in self.queries]}


def impact(recall: Recall, queries: Sequence[Query], cfg_a: Config, cfg_b: Config,
           progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
           keep_partial: bool = False) -> Impact:
    """Recall each query once (deep enough for both configs), rank it under A and B, compare
    the two top-k lists. Both configs must return the same k (`top_k`). Cancelled: `Cancelled`,
    or with `keep_partial` the impact of the queries done by then (the first ones, in order)."""
    if cfg_a.top_k != cfg_b.top_k:
        raise MemsenseError(f"A returns top {cfg_a.top_k} and B top {cfg_b.top_k}: give --k so both return as many")
    depth = max(cfg_a.route_limit, cfg_b.route_limit)
    out: list[QueryImpact] = []
    for n, q in enumerate(queries):
        if cancelled is not None and cancelled():
            if keep_partial:
                return Impact(cfg_a.top_k, tuple(out))
            raise Cancelled("impact cancelled")
        if progress:
            progress(n, len(queries), "recall and re-rank")
        pool = recall(q.user_id, q.text, depth)
        out.append(QueryImpact(q.user_id, q.text, tuple(rerank(pool, cfg_a).result_ids),
                               tuple(rerank(pool, cfg_b).result_ids), cfg_a.top_k))
    if progress:
        progress(len(queries), len(queries), "done")
    return Impact(cfg_a.top_k, tuple(out))


def read_queries(path: str, default_user: str | None = None, text: str | None = None) -> list[Query]:
    """Queries with their users, one a line: `user<TAB>query`, or JSON Lines with `user` and
    `query` keys (as exported from a live Memsense's logs), or a bare query when
    `default_user` is given. Blank lines and lines starting with # are skipped. A question set (LoCoMo
    JSON, the project's question files, LongMemEval) gives its questions as the queries, judged or not
    (`question_set_queries`)."""
    body = read_text(path, "query file") if text is None else text
    if _question_set(body):
        return question_set_queries(path)
    out = []
    for n, line in enumerate(body.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            out.append(_json_query(path, n, line))
        elif "\t" in line:
            user, query = (s.strip() for s in line.split("\t", 1))
            if not user or not query:
                raise MemsenseError(f"{path}:{n}: a user and a query are needed, as USER<TAB>QUERY")
            out.append(Query(user, query))
        elif default_user:
            out.append(Query(default_user, line))
        else:
            raise MemsenseError(f"{path}:{n}: no user for this query; write USER<TAB>QUERY, or pass --user")
    if not out:
        raise MemsenseError(f"{path}: no queries (one a line: USER<TAB>QUERY, or JSON Lines with user and query)")
    _check_texts(path, body, out)
    return out


def _check_texts(path: str, body: str, queries: list[Query]) -> None:
    """Every query as a search would check it, before any is recalled: a bad one on line
    199,000 would otherwise end the run there, and the hour of work before it with it."""
    from core.recall.query_text import check_query

    for q in queries:
        try:
            check_query(q.text)
        except MemsenseError as exc:
            n = next((i for i, line in enumerate(body.splitlines(), start=1) if q.text in line), 0)
            raise MemsenseError(f"{path}:{n}: {exc}") from None


def _question_set(body: str) -> bool:
    """A whole JSON document that is no single JSON Lines query: a question set."""
    head = body.lstrip()[:1]
    if head not in ("[", "{"):
        return False
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return False  # JSON Lines, or broken: the line reader says which line
    return isinstance(data, list) or (isinstance(data, dict) and "query" not in data)


def question_set_queries(path: str | Path) -> list[Query]:
    """Every question of a question set, as the query of its user (the store's own questions as real
    queries, used unjudged)."""
    from core.evaluation.judged import load_question_set

    questions = load_question_set(path)
    if not questions:
        raise MemsenseError(f"{path}: a question set with no questions")
    return [Query(q.user_id, q.text) for q in questions]


def _json_query(path: str, n: int, line: str) -> Query:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise MemsenseError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
    user = obj.get("user", obj.get("user_id")) if isinstance(obj, dict) else None
    query = obj.get("query") if isinstance(obj, dict) else None
    if not isinstance(user, str) or not user or not isinstance(query, str) or not query.strip():
        raise MemsenseError(f"{path}:{n}: a JSON line needs string keys \"user\" and \"query\"")
    return Query(user, query.strip())
