"""The ideas of issue 22 item 3 as functions of one question's ranked sessions (tools/beyond_experiments.py).

Each variant takes a `Question` context (`Ctx`: the config's session order with each session's
final score, the user's session index, the query vector) and returns the session codes it would
show, best first. Nothing here changes the store: the keyword indexes are built in memory.

Route variants add a route's RRF term to each session's final score, which is what a route of
that weight does to the session chunk that carries it in the `sessions` preset (RRF k = 10,
alpha 0: `final = Σ_route weight / (k + rank) + turn support`), and re-sort.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from core.recall.lexical.analyzer import ANALYZERS, AnalyzedIndex
from core.recall.lexical.bm25 import LexicalIndex, tokenize
from core.recall.sessions import SessionIndex, session_document

K = 4
RRF_K = 10.0  # the `sessions` preset's rrf_k
ENGLISH = ANALYZERS["english"]


@dataclass
class UserData:
    """One user's sessions as the variants read them (documents in `SessionIndex` order)."""

    index: SessionIndex
    vec_full: np.ndarray
    doc_of: dict[int, int]  # session code -> document
    terms: list[set[str]]  # document -> its analyzed terms
    means: np.ndarray  # document -> unit mean of its turn vectors (the `mean` aggregation's, made for every index)
    keyword_indexes: dict[str, AnalyzedIndex] = field(default_factory=dict)

    @classmethod
    def build(cls, chunks: Sequence, index: SessionIndex, vec_full: np.ndarray) -> "UserData":
        docs = [session_document([chunks[r] for r in rows.tolist()]) for rows in index.rows]
        terms = [set(ENGLISH.tokens(d)) for d in docs]
        sums = np.add.reduceat(vec_full[index.members].astype(np.float64), index.starts) if index.size else np.zeros((0, 1))
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        means = np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0)
        data = cls(index, vec_full, {int(c): i for i, c in enumerate(index.codes.tolist())}, terms, means)
        data.keyword_indexes["capitalised"] = AnalyzedIndex(LexicalIndex([" ".join(capitalised(d)) for d in docs]), ENGLISH)
        data.keyword_indexes["tfidf20"] = AnalyzedIndex(LexicalIndex([" ".join(t) for t in top_terms(docs, 20)]), ENGLISH)
        return data


def capitalised(text: str) -> list[str]:
    """Capitalised words that do not open a sentence or a message line: names, places, titles."""
    out = []
    for m in re.finditer(r"(?<![.!?:\n]\s)(?<!^)\b[A-Z][a-zA-Z]+", text):
        out.append(m.group())
    return out


def top_terms(docs: Sequence[str], n: int) -> list[list[str]]:
    """Each document's `n` analyzed terms of highest tf·idf among the user's sessions."""
    counts = [dict[str, int]() for _ in docs]
    for c, d in zip(counts, docs):
        for t in ENGLISH.tokens(d):
            c[t] = c.get(t, 0) + 1
    df: dict[str, int] = {}
    for c in counts:
        for t in c:
            df[t] = df.get(t, 0) + 1
    out = []
    for c in counts:
        weight = {t: tf * np.log(len(docs) / df[t]) for t, tf in c.items()}
        out.append(sorted(weight, key=lambda t: (-weight[t], t))[:n])
    return out


@dataclass
class Ctx:
    """One question under one base config."""

    text: str
    codes: list[int]  # session codes in final order (first row of each session)
    final: dict[int, float]  # session code -> final score of that row
    route_rank: Callable[[int, str], int]  # (code, route) -> the row's rank on that route, 0 = absent
    user: UserData
    qvec: np.ndarray


def by_score(codes: Sequence[int], score: dict[int, float]) -> list[int]:
    return sorted(codes, key=lambda c: (-score[c], codes.index(c)))


def rrf(rank: int, weight: float) -> float:
    return weight / (RRF_K + rank) if rank > 0 else 0.0


# 1. cluster-based selection
def cluster(ctx: Ctx, n: int) -> list[int]:
    """Average-linkage clusters (cosine) of the top `n` sessions' mean turn vectors, cut into K;
    the best session of each cluster in final order, the rest after them in final order."""
    top = ctx.codes[:n]
    if len(top) <= K:
        return ctx.codes
    vecs = np.array([ctx.user.means[ctx.user.doc_of[c]] for c in top], dtype=np.float64)
    labels = fcluster(linkage(vecs, "average", metric="cosine"), K, criterion="maxclust")
    first_of: dict[int, int] = {}
    for c, lab in zip(top, labels.tolist()):
        first_of.setdefault(lab, c)
    heads = sorted(first_of.values(), key=top.index)
    return heads + [c for c in ctx.codes if c not in heads]


# 2. negative-feedback retrieval
def dense_scores(user: UserData, q: np.ndarray) -> np.ndarray:
    cos = user.vec_full[user.index.members].astype(np.float64) @ q
    return np.maximum.reduceat(cos, user.index.starts)


def ranks_of(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    out = np.empty(len(scores), dtype=np.int64)
    out[order] = np.arange(1, len(scores) + 1)
    return out


def away_dense(ctx: Ctx, gamma: float, weight: float = 1.0) -> list[int]:
    """After each pick, query session_dense with `q − gamma · mean(picked sessions' unit mean
    vectors)` (Rocchio's negative feedback) and swap that route's RRF term for the new rank."""
    picked = [ctx.codes[0]]
    q = np.asarray(ctx.qvec, dtype=np.float64)
    while len(picked) < min(K, len(ctx.codes)):
        away = np.mean([ctx.user.means[ctx.user.doc_of[c]] for c in picked], axis=0)
        qn = q - gamma * away
        qn /= np.linalg.norm(qn) or 1.0
        new = ranks_of(dense_scores(ctx.user, qn))
        score = {c: ctx.final[c] - rrf(ctx.route_rank(c, "session_dense"), weight) + rrf(int(new[ctx.user.doc_of[c]]), weight)
                 for c in ctx.codes if c not in picked}
        picked.append(by_score(list(score), score)[0])
    return picked + [c for c in ctx.codes if c not in picked]


def drop_terms(ctx: Ctx, weight: float = 2.0) -> list[int]:
    """After each pick, drop from the session_lexical query the words whose terms the picked
    sessions hold, re-score that route and swap its RRF term (no change once no word is left)."""
    picked = [ctx.codes[0]]
    words = tokenize(ctx.text)
    while len(picked) < min(K, len(ctx.codes)):
        held = set().union(*(ctx.user.terms[ctx.user.doc_of[c]] for c in picked))
        kept = [w for w in words if (t := ENGLISH.term(w)) is not None and t not in held]
        rest = [c for c in ctx.codes if c not in picked]
        if not kept:
            picked.append(rest[0])
            continue
        scores = ctx.user.index.lexical.scores(" ".join(kept))
        new = np.where(scores > 0, ranks_of(scores), 0)
        score = {c: ctx.final[c] - rrf(ctx.route_rank(c, "session_lexical"), weight) + rrf(int(new[ctx.user.doc_of[c]]), weight)
                 for c in rest}
        picked.append(by_score(rest, score)[0])
    return picked + [c for c in ctx.codes if c not in picked]


# 3. coverage-aware selection
def coverage(ctx: Ctx, beta: float) -> list[int]:
    """After the top session, each pick maximises `final + beta · (share of the query's terms it
    holds that no picked session holds)`."""
    q = set(ENGLISH.tokens(ctx.text))
    if not q:
        return ctx.codes
    picked = [ctx.codes[0]]
    covered = q & ctx.user.terms[ctx.user.doc_of[picked[0]]]
    while len(picked) < min(K, len(ctx.codes)):
        rest = [c for c in ctx.codes if c not in picked]
        score = {c: ctx.final[c] + beta * len((q & ctx.user.terms[ctx.user.doc_of[c]]) - covered) / len(q) for c in rest}
        best = by_score(rest, score)[0]
        picked.append(best)
        covered |= q & ctx.user.terms[ctx.user.doc_of[best]]
    return picked + [c for c in ctx.codes if c not in picked]


# 4. keyword/entity session index as a route
def keyword_route(ctx: Ctx, field_name: str, weight: float) -> list[int]:
    scores = ctx.user.keyword_indexes[field_name].scores(ctx.text)
    new = np.where(scores > 0, ranks_of(scores), 0)
    score = {c: ctx.final[c] + rrf(int(new[ctx.user.doc_of[c]]), weight) for c in ctx.codes}
    return by_score(ctx.codes, score)


# 5. decomposition of how-many / total / all / when questions
TRIGGER = re.compile(r"^\s*(how (many|much|long)|when)\b|\b(all|total|every|both)\b", re.I)
SPLIT = re.compile(r",|;|\band\b|\bor\b|\bbefore\b|\bafter\b|\bwhile\b|\bsince\b", re.I)


def sub_queries(text: str) -> list[str]:
    """The parts of a triggered question split at conjunctions, commas and time connectives, each
    with the question's names added when it lost them ([] when it does not split in two)."""
    if not TRIGGER.search(text):
        return []
    parts = [p.strip() for p in SPLIT.split(text) if len(ENGLISH.tokens(p)) >= 1]
    if len(parts) < 2:
        return []
    names = [w for w in re.findall(r"\b[A-Z][a-z]+\b", text) if ENGLISH.term(w.lower()) is not None][:2]
    return [" ".join([*(n for n in names if n not in p), p]) for p in parts]


def fuse_orders(full: Sequence[int], parts: Sequence[Sequence[int]], part_weight: float) -> list[int]:
    """RRF (k = 10) of the full question's session order and its parts' (sharing `part_weight`)."""
    score = {c: 1.0 / (RRF_K + i + 1) for i, c in enumerate(full)}
    for order in parts:
        for i, c in enumerate(order):
            score[c] = score.get(c, 0.0) + part_weight / len(parts) / (RRF_K + i + 1)
    codes = list(full) + [c for order in parts for c in order if c not in full]
    return sorted(dict.fromkeys(codes), key=lambda c: (-score[c], codes.index(c)))
