"""Retrieval metrics at a cut-off k (SPEC §8), per question and averaged.

A question's results are a ranked list of document ids (for LoCoMo: the session number of
each result, in result order) and its judgments `qrels` map a document to a grade (0-3);
grade ≥ 1 is relevant. Only the first k results count; a document repeated in the list
(two chunks of one session) counts at its first position only.

- `recall_any@k` = 1 when some relevant document is in the top k, else 0
- `recall_all@k` = 1 when every relevant document is in the top k (multi-session "all" recall)
- `recall@k`     = |relevant ∩ top k| / |relevant|
- `mrr`          = 1 / position of the first relevant result (0 when none), over the whole list
- `ndcg@k`       = DCG@k / IDCG@k, `DCG@k = Σ_{i≤k} gain_i / log2(i + 1)`, gain = grade (binary
                   judgments: 1), IDCG = the same sum over the grades sorted best first

A question with no relevant document scores 0 everywhere; evaluations leave such questions
out. These agree with trec_eval (`ir_measures`: Success@k, R@k, RR, nDCG@k) on lists without
repeats; `recall_all@k` has no trec_eval counterpart.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence, TypeVar

import numpy as np

from core.config.schema import TOP_K_MAX
from core.errors import MemsenseError

BASE_METRICS: tuple[str, ...] = ("recall_any", "recall_all", "recall", "mrr", "ndcg")
AT_K = {"recall_any", "recall_all", "recall", "ndcg"}

D = TypeVar("D", bound=Hashable)
"""A document id (a session id, a memory id, a row: whatever the ranking and the judgments share)."""
Ranked = Sequence[D]
Qrels = Mapping[D, int]


def metric_names(k: int) -> tuple[str, ...]:
    """The usual names at k: `recall_any@4, recall_all@4, recall@4, mrr, ndcg@4`."""
    return tuple(f"{m}@{k}" if m in AT_K else m for m in BASE_METRICS)


def parse_metric(name: str, default_k: int = 4) -> tuple[str, int]:
    """`"recall_all@4"` -> ("recall_all", 4); `"mrr"` -> ("mrr", default_k)."""
    m = re.fullmatch(r"\s*([a-z_]+)\s*(?:@\s*(\d+))?\s*", name or "")
    if not m or m.group(1) not in BASE_METRICS or (m.group(2) and m.group(1) not in AT_K):
        raise MemsenseError(f"unknown metric {name!r}; use one of "
                            + ", ".join(metric_names(default_k)) + " (any k ≥ 1 after @)")
    digits = m.group(2)
    if digits and (len(digits) > len(str(TOP_K_MAX)) or int(digits) > TOP_K_MAX):  # no config returns more
        raise MemsenseError(f"metric {name!r}: k must be at most {TOP_K_MAX} (the largest top_k)")
    k = int(digits) if digits else default_k
    if k < 1:
        raise MemsenseError(f"metric {name!r}: k must be at least 1")
    return m.group(1), k


def metric_key(base: str, k: int) -> str:
    return f"{base}@{k}" if base in AT_K else base


def _top(ranked: Ranked[D], k: int | None) -> list[tuple[int, D]]:
    """First occurrences among the first k results, each with its 1-based result position."""
    seen: set[D] = set()
    out: list[tuple[int, D]] = []
    for pos, doc in enumerate(ranked if k is None else ranked[:k], start=1):
        if doc not in seen:
            seen.add(doc)
            out.append((pos, doc))
    return out


def relevant_of(qrels: Qrels[D]) -> set[D]:
    return {d for d, g in qrels.items() if g >= 1}


def recall_any(ranked: Ranked[D], qrels: Qrels[D], k: int) -> float:
    """1 if any relevant document is among the first k results, else 0."""
    rel = relevant_of(qrels)
    return float(any(doc in rel for _, doc in _top(ranked, k)))


def recall_all(ranked: Ranked[D], qrels: Qrels[D], k: int) -> float:
    """1 if every relevant document is among the first k results (0 with none relevant)."""
    rel = relevant_of(qrels)
    return float(bool(rel) and rel <= {doc for _, doc in _top(ranked, k)})


def recall(ranked: Ranked[D], qrels: Qrels[D], k: int) -> float:
    """|relevant ∩ first k| / |relevant| (0 with none relevant)."""
    rel = relevant_of(qrels)
    return len(rel & {doc for _, doc in _top(ranked, k)}) / len(rel) if rel else 0.0


def mrr(ranked: Ranked[D], qrels: Qrels[D]) -> float:
    """1 / position of the first relevant result, 0 when none is relevant."""
    rel = relevant_of(qrels)
    return next((1.0 / pos for pos, doc in _top(ranked, None) if doc in rel), 0.0)


def ndcg(ranked: Ranked[D], qrels: Qrels[D], k: int) -> float:
    """`Σ_{i≤k} gain_i / log2(i + 1)` over the ideal ordering's sum; gain = grade (0 if unjudged)."""
    dcg = sum(max(qrels.get(doc, 0), 0) / math.log2(pos + 1) for pos, doc in _top(ranked, k))
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def question_metrics(ranked: Ranked[D], qrels: Qrels[D], k: int) -> dict[str, float]:
    """Every metric of `BASE_METRICS` for one question, under its name at k."""
    return {
        f"recall_any@{k}": recall_any(ranked, qrels, k),
        f"recall_all@{k}": recall_all(ranked, qrels, k),
        f"recall@{k}": recall(ranked, qrels, k),
        "mrr": mrr(ranked, qrels),
        f"ndcg@{k}": ndcg(ranked, qrels, k),
    }


def mean_metrics(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Arithmetic mean of each metric over questions (macro over questions)."""
    rows = list(rows)
    if not rows:
        return {}
    return {name: float(np.mean([r[name] for r in rows])) for name in rows[0]}


# ------------------------------------------------------------------ paired comparison

@dataclass(frozen=True)
class QuestionDiff:
    question_id: str
    a: float
    b: float

    @property
    def diff(self) -> float:
        return self.b - self.a


@dataclass(frozen=True)
class Comparison:
    """B against A on one metric over the same questions: means, wins / losses, p-value."""

    metric: str
    mean_a: float
    mean_b: float
    wins: int  # questions where B scores higher than A
    losses: int  # questions where B scores lower
    ties: int
    p_value: float
    test: str
    diffs: tuple[QuestionDiff, ...]

    @property
    def delta(self) -> float:
        return self.mean_b - self.mean_a


TESTS = ("permutation", "wilcoxon")


def compare(a: Mapping[str, float], b: Mapping[str, float], metric: str = "", test: str = "permutation",
            resamples: int = 10000, seed: int = 0) -> Comparison:
    """Paired comparison of two presets' per-question scores (keys = question ids, same set).

    `permutation`: two-sided paired randomisation test of the mean difference: under the null
    each question's difference `b − a` is as likely negated, so the p-value is the share of
    random sign flips (seeded; exact when there are few non-zero differences) whose mean is at
    least as far from 0 as the observed one. `wilcoxon`: scipy's signed-rank test (zero
    differences dropped). No non-zero difference gives p = 1.
    """
    if set(a) != set(b):
        raise MemsenseError("compare: the two presets were evaluated on different questions")
    if test not in TESTS:
        raise MemsenseError(f"unknown test {test!r}; use {' or '.join(TESTS)}")
    ids = sorted(a)
    diffs = tuple(QuestionDiff(q, float(a[q]), float(b[q])) for q in ids)
    d = np.array([x.diff for x in diffs], dtype=np.float64)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    p = _p_value(d, test, resamples, seed)
    mean_a = float(np.mean([x.a for x in diffs])) if diffs else 0.0
    mean_b = float(np.mean([x.b for x in diffs])) if diffs else 0.0
    return Comparison(metric, mean_a, mean_b, wins, losses, len(d) - wins - losses, p, test, diffs)


def _p_value(d: np.ndarray, test: str, resamples: int, seed: int) -> float:
    nz = d[d != 0]
    if len(nz) == 0:
        return 1.0
    if test == "wilcoxon":
        from scipy import stats

        return float(stats.wilcoxon(nz, zero_method="wilcox").pvalue)
    return sign_flip_p(nz, resamples, seed)


def sign_flip_p(d: np.ndarray, resamples: int = 10000, seed: int = 0) -> float:
    """Two-sided paired randomisation test of `mean(d) = 0` by flipping signs of `d`.

    Zero differences are left out (a sign flip does not change them, so they only scale every
    mean alike). With 2^n ≤ resamples every sign pattern is enumerated (exact p); otherwise
    `p = (1 + #{resampled |mean| ≥ observed |mean|}) / (1 + resamples)`, seeded.
    """
    d = np.asarray(d, dtype=np.float64)
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    observed = abs(d.mean()) * (1 - 1e-12)
    if 2 ** n <= resamples:
        patterns = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
        return float(np.mean(np.abs(patterns @ d / n) >= observed))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, resamples, 1000):
        signs = rng.integers(0, 2, size=(min(1000, resamples - start), n), dtype=np.int8) * 2 - 1
        hits += int((np.abs(signs @ d / n) >= observed).sum())
    return (1 + hits) / (1 + resamples)
