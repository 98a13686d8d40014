"""The metrics of `core.evaluation.metrics` for every question at once, from the padded
selections of `core.evaluation.batch` (session numbers, -1 after each question's count).

Each value is the one `question_metrics` gives: the same first-occurrence rule and the same
divisions; a DCG of more than one non-zero gain is added by Python's `sum` itself (which
compensates rounding from Python 3.12 on). `tests/evaluation/test_batch_metrics.py` checks
every metric against `question_metrics` on random lists.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np



class Grades:
    """The session grades of a fixed list of questions, looked up for many selections."""

    def __init__(self, qrels: Sequence[Mapping[int, int]]):
        self.n = len(qrels)
        docs = [(q, int(d), int(g)) for q, grades in enumerate(qrels) for d, g in grades.items()]
        self.low = min((d for _, d, _ in docs), default=0)
        self.span = max((d for _, d, _ in docs), default=0) - self.low + 1
        keys = np.array([q * self.span + d - self.low for q, d, _ in docs], dtype=np.int64)
        order = np.argsort(keys)
        self.keys = keys[order]
        self.grades = np.array([g for _, _, g in docs], dtype=np.int64)[order]
        self.relevant = np.array([sum(g >= 1 for g in grades.values()) for grades in qrels], dtype=np.int64)
        self._qrels = list(qrels)
        self._idcg: dict[int, np.ndarray] = {}

    def lookup(self, sessions: np.ndarray) -> np.ndarray:
        """The grade of each selected session (0 when not judged or padding)."""
        d = sessions - self.low
        inside = (sessions >= 0) & (d >= 0) & (d < self.span)
        keys = np.arange(self.n)[:, None] * self.span + np.where(inside, d, 0)
        at = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        hit = inside & (len(self.keys) > 0) & (self.keys[at] == keys) if len(self.keys) else np.zeros(keys.shape, bool)
        return np.where(hit, self.grades[at] if len(self.keys) else 0, 0)

    def idcg(self, k: int) -> np.ndarray:
        if k not in self._idcg:
            self._idcg[k] = np.array([_idcg(grades, k) for grades in self._qrels])
        return self._idcg[k]

    def values(self, metric: str, k: int, sessions: np.ndarray, count: np.ndarray) -> np.ndarray:
        """`question_metrics(...)[metric]` of every question: `sessions` (n, width) in result
        order, `count` how many of them each question has."""
        width = sessions.shape[1]
        pos = np.arange(width)
        shown = pos[None, :] < count[:, None]
        earlier = (sessions[:, None, :] == sessions[:, :, None]) & (pos[None, :] < pos[:, None])[None]
        first = shown & ~(earlier & shown[:, None, :]).any(axis=2)  # a session counts at its first position only
        grade = np.maximum(self.lookup(np.where(shown, sessions, -1)), 0)
        hit = first & (grade >= 1)
        top = pos[None, :] < k
        found = (hit & top).sum(axis=1)
        if metric == "mrr":
            any_hit = hit.any(axis=1)
            return np.where(any_hit, 1.0 / (np.argmax(hit, axis=1) + 1.0), 0.0)
        if metric.startswith("recall_any@"):
            return (found > 0).astype(np.float64)
        if metric.startswith("recall_all@"):
            return ((self.relevant > 0) & (found == self.relevant)).astype(np.float64)
        if metric.startswith("recall@"):
            return np.divide(found, self.relevant, out=np.zeros(self.n), where=self.relevant > 0)
        if metric.startswith("ndcg@"):
            cut = min(k, width)
            gains = np.where(first[:, :cut], grade[:, :cut] / np.array([math.log2(j + 2) for j in range(cut)]), 0.0)
            dcg = gains.sum(axis=1)  # exact with at most one non-zero gain
            for q in np.flatnonzero((gains != 0).sum(axis=1) > 1).tolist():
                dcg[q] = sum(gains[q].tolist())
            ideal = self.idcg(k)
            return np.divide(dcg, ideal, out=np.zeros(self.n), where=ideal > 0)
        raise ValueError(f"unknown metric {metric!r}")


def _idcg(grades: Mapping[int, int], k: int) -> float:
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    return sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def mean(values: np.ndarray) -> float:
    """The values added one by one in question order, over their count (as a Python loop adds)."""
    total = 0.0
    for v in values.tolist():
        total += v
    return total / len(values) if len(values) else math.nan

