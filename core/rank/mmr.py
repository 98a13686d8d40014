"""Diversity selection by Maximal Marginal Relevance, as Memsense does it (SPEC §5).

`redundancy(a, b) = max(cos(a, b), tag_weight · jaccard(tags_a, tags_b))`, cos clamped to
[0, 1] and 0 when a vector is missing or dimensions differ. Rows are taken in final-score
order; the first is picked outright, then each pick maximises
`mmr = lambda · final_score − (1 − lambda) · max_redundancy` over the rows that are not
duplicates (`max_redundancy ≥ duplicate_threshold`); the earliest row wins ties. When every
remaining row is a duplicate, the next one in final-score order is appended (fallback fill).

Each cosine is one row's dot product summed the same way whatever matrix the row sits in
(`row_dots`): BLAS's matrix-vector product changes the last bits of a row's result with its
position in the matrix, so the same two chunks could be more or less redundant depending on
which other rows were re-ranked with them. Tuning relies on this: it reads cosines from a
table of every pair (`core.evaluation.batch`) and picks exactly what `select` picks.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from core.rank.score import ONE, ZERO


class MMRStep(NamedTuple):
    """One pick: which row, its mmr score and the redundancy that was charged against it."""

    position: int  # 0-based place in the results
    row: int
    mmr_score: float | None  # None for the first pick and for fallback fills
    max_redundancy: float
    redundant_with: int | None  # the selected row that caused max_redundancy
    fallback: bool
    skipped: tuple[tuple[int, float, int], ...]  # (row, redundancy, duplicate of row)


@dataclass(frozen=True)
class Selection:
    order: tuple[int, ...]  # rows in result order
    steps: tuple[MMRStep, ...]
    max_redundancy: np.ndarray  # (n,) against the final selection
    redundant_with: np.ndarray  # (n,) int, -1 = none
    selected_rank: tuple[int | None, ...]  # Memsense's diversity.selected_rank per result
    same_session: Mapping[int, int] = field(default_factory=dict)
    """Selection by session: row -> the earlier row of its session that MMR saw instead (skipped)."""


def first_of_session(sessions: np.ndarray) -> dict[int, int]:
    """Rows (in final-score order) that are not the first of their session -> that first row."""
    first: dict[int, int] = {}
    out: dict[int, int] = {}
    for row, s in enumerate(sessions.tolist()):
        if s in first:
            out[row] = first[s]
        else:
            first[s] = row
    return out


def step_explain(step: MMRStep, id_of: Callable[[int | None], str | None]) -> dict[str, Any]:
    """The MMR trace of one pick as the `explain.mmr` record, rows named by `id_of`."""
    return {
        "mmr_score": step.mmr_score,
        "max_redundancy": step.max_redundancy,
        "redundant_with": id_of(step.redundant_with),
        "fallback_fill": step.fallback,
        "skipped_duplicates": [{"memory_id": id_of(r), "redundancy": red, "duplicate_of": id_of(of)}
                               for r, red, of in step.skipped],
    }


def tag_matrix(tags: list[tuple[str, ...]] | list[list[str]]) -> np.ndarray:
    """Multi-hot (n, vocabulary) matrix of the rows' tag sets, the vocabulary sorted."""
    flat = list(itertools.chain.from_iterable(tags))
    vocab = {t: j for j, t in enumerate(sorted(set(flat)))}
    out = np.zeros((len(tags), max(len(vocab), 1)), dtype=np.float64)
    if flat:
        rows = np.arange(len(tags)).repeat(np.fromiter(map(len, tags), dtype=np.int64, count=len(tags)))  # the method: `np.repeat` wraps it in Python
        out[rows, np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))] = 1.0  # a tag twice is 1
    return out


def row_dots(unit: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """`unit @ vector`, each row's sum taken in the same order wherever the row is: one dot
    product per contiguous row (`np.vecdot`, BLAS's ddot), not BLAS's matrix-vector product,
    whose result depends on the row's position."""
    return np.vecdot(np.ascontiguousarray(unit, dtype=np.float64), np.ascontiguousarray(vector, dtype=np.float64))


def group_dots(units: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """`row_dots(units[g], vectors[g])` for every group g of (groups, rows, d) units at once:
    the same sum of products per row, bit for bit (`tests/rank/test_mmr.py`)."""
    return np.vecdot(np.ascontiguousarray(units, dtype=np.float64),
                     np.ascontiguousarray(vectors, dtype=np.float64)[:, None, :])


def redundancy_to(
    row: int, unit: np.ndarray, dims: np.ndarray, tags: np.ndarray, tag_counts: np.ndarray, tag_weight: float
) -> np.ndarray:
    """`redundancy(i, row)` for every row i, vectorised."""
    return Redundancy(unit, dims, tags, tag_weight, tag_counts)(row)


class Redundancy:
    """`redundancy(i, row)` for every row i, with what does not depend on `row` worked out once
    per selection, by the same operations on the same values, so the same floats: whether every
    row has a vector of one dimension, and, when the rows hold few distinct tag sets for the
    picks to come, each distinct set's weighted Jaccard against each row (a pick then reads its
    set's row of that table)."""

    def __init__(self, unit: np.ndarray, dims: np.ndarray, tags: np.ndarray, tag_weight: float,
                 tag_counts: np.ndarray | None = None, picks: int = 1) -> None:
        self.unit = np.ascontiguousarray(unit, dtype=np.float64)
        self.dims, self.tags, self.tag_weight = dims, tags, tag_weight
        self.uniform = len(dims) > 0 and _same(dims) and dims.item(0) > 0
        self.table = _tag_table(tags, tag_weight, picks)
        self.tag_counts: np.ndarray | None = tags.sum(axis=1) if tag_counts is None and self.table is None else tag_counts
        self.tag_in_unit = 0.0 <= tag_weight <= 1.0 and math.copysign(1.0, tag_weight) > 0  # every tag term is in [0, 1] (no -0)

    def __call__(self, row: int) -> np.ndarray:
        cos = np.vecdot(self.unit, self.unit[row])
        if not self.uniform:
            cos = np.where((self.dims == self.dims[row]) & (self.dims > 0), cos, 0.0)
        if self.table is not None:
            terms, set_of = self.table
            tag = terms[set_of[row]]
        else:
            counts = self.tag_counts
            assert counts is not None  # set in __init__ whenever there is no table
            inter = self.tags @ self.tags[row]
            union = counts + counts[row] - inter
            tag = self.tag_weight * np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        if self.tag_in_unit:  # max(clip(cos, 0, 1), tag) is min(max(cos, tag), 1) for a tag term in [0, 1], zeros and all
            return np.minimum(np.maximum(cos, tag, out=cos), ONE, out=cos)
        np.minimum(np.maximum(cos, ZERO, out=cos), ONE, out=cos)
        return np.maximum(cos, tag, out=cos)


def _same(values: np.ndarray) -> bool:
    """Whether every value of a non-empty array is the first: its smallest is its largest
    (`argmin` and `argmax` are C methods; `(values == values[0]).all()` is three calls, one
    through Python, about 2 us for 32 rows)."""
    return bool(values.item(values.argmin()) == values.item(values.argmax()))


TAG_TABLE_WORK = 8
"""A selection builds the tag table (distinct sets k, rows n) when its k·(k + n) elements are
at most this many times the picks' n each: otherwise each pick computes its row's Jaccards.
When the rows are few enough that every row may be its own set (k = n) within that bound, the
table is of every pair, and the distinct sets are not looked for."""
_BITS = np.int64(1) << np.arange(62, dtype=np.int64)


def _tag_table(tags: np.ndarray, tag_weight: float, picks: int) -> tuple[np.ndarray, list[int]] | None:
    """(terms, set_of): `tag_weight · jaccard` of every distinct tag set against every row
    (k, n), and each row's set (a list: a pick reads its set's row); None when a table would
    cost more than the picks save. The distinct sets are found by a dict over each row's set as
    bits; their order changes no value of the table."""
    n, vocabulary = tags.shape
    if n == 0 or vocabulary > len(_BITS):
        return None
    if 2 * n * n <= TAG_TABLE_WORK * picks * n:  # every pair: no search for the distinct sets
        sets, set_of = tags, list(range(n))
    else:
        codes = (tags.astype(np.int64) @ _BITS[:vocabulary]).tolist()  # a set as bits
        first = dict(zip(reversed(codes), range(n - 1, -1, -1)))  # each set's first row: the last write wins
        k = len(first)
        if k * (k + n) > TAG_TABLE_WORK * picks * n:
            return None
        number = {code: j for j, code in enumerate(first)}
        set_of = list(map(number.__getitem__, codes))
        sets = tags[list(first.values())]
    inter = sets @ sets.T  # counts of shared tags: whole numbers, exact in any order
    counts = inter.diagonal()  # each set's own count
    union = counts[:, None] + counts  # symmetric, as each pick's own union (a sum of two counts, less the shared)
    union -= inter
    np.maximum(union, ONE, out=union)  # an empty union shares nothing: 0 / 1 is the 0 it gets
    terms = np.divide(inter, union, out=union)
    terms *= tag_weight  # symmetric: row j is set j against each set, then against each row
    return (terms if sets is tags else np.ascontiguousarray(terms[:, set_of])), set_of


def select(
    final: np.ndarray,
    unit: np.ndarray,
    dims: np.ndarray,
    tags: np.ndarray,
    *,
    top_k: int,
    mmr_lambda: float,
    duplicate_threshold: float,
    tag_weight: float,
    fallback_fill: bool = True,
    sessions: np.ndarray | None = None,
) -> Selection:
    """MMR over rows already sorted by final score descending (ties by id). With `sessions`
    (each row's session: selection by session), only the first row of each session is
    selectable; the others are skipped as "same session" (`Selection.same_session`)."""
    n = len(final)
    if n == 0:
        return Selection((), (), np.zeros(0), np.full(0, -1, dtype=np.int64), ())
    same = first_of_session(sessions) if sessions is not None else {}
    picks = _Picks(np.asarray(final, dtype=np.float64), mmr_lambda, duplicate_threshold,
                   Redundancy(unit, dims, tags, tag_weight, picks=min(top_k, n)), list(same))
    picks.take(0, None, False, ())
    wanted = min(top_k, n - len(same))
    while len(picks.order) < wanted:
        if not picks.next(fallback_fill):
            break
    return Selection(tuple(picks.order), tuple(picks.steps), picks.max_red, picks.cause, tuple(picks.ranks), same)


class _Picks:
    """The state of one selection: each row's max redundancy against the picks so far and the
    pick that caused it, the rows still selectable, and the trace. A row is free while it is
    neither picked, nor skipped by session, nor a duplicate (`max_redundancy ≥ duplicate_threshold`:
    once one, always one, as max_redundancy only grows); `open` holds the relevance of the free
    rows and −inf for the others, so `open − (1 − λ) · max_redundancy` is each free row's mmr and
    −inf elsewhere: one argmax finds the earliest free row of the largest mmr, and when that mmr
    is above −inf the row is free. Until a pick's redundancy reaches the threshold on a row
    other than itself there is no duplicate to look for."""

    def __init__(self, final: np.ndarray, mmr_lambda: float, duplicate_threshold: float,
                 redundancy: Redundancy, unselectable: list[int]) -> None:
        n = len(final)
        self.redundancy, self.penalty = redundancy, np.asarray(1.0 - mmr_lambda, dtype=np.float64)
        self.threshold = duplicate_threshold  # compared with one number
        self.threshold_0d = np.asarray(duplicate_threshold, dtype=np.float64)  # with an array (as ZERO and ONE)
        self.max_red, self.cause, self.remaining = np.zeros(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=bool)
        self.cause.fill(-1)  # empty and fill: `np.full` and `np.ones` are Python functions, 1 us each
        self.remaining.fill(True)
        self.mmr = np.empty(n)  # each pick's mmr, written in place
        self.open = mmr_lambda * final  # mmr = relevance − (1 − λ) · max_redundancy
        if unselectable:
            self.remaining[unselectable] = False
            self.open[unselectable] = -np.inf
        self.dup = np.zeros(n, dtype=bool)
        self.crowded = bool(0.0 >= duplicate_threshold)  # whether there may be duplicates: every row is one at 0
        self.order: list[int] = []
        self.steps: list[MMRStep] = []
        self.ranks: list[int | None] = []

    def take(self, row: int, mmr_score: float | None, fallback: bool, skipped: tuple) -> None:
        was = self.cause.item(row)
        self.steps.append(MMRStep(len(self.order), row, mmr_score, self.max_red.item(row),
                                  was if was >= 0 else None, fallback, skipped))
        self.ranks.append(None if mmr_score is None else len(self.order))
        self.order.append(row)
        self.remaining[row] = False
        self.open[row] = -np.inf
        red = self.redundancy(row)
        self.cause[red > self.max_red] = row
        np.maximum(self.max_red, red, out=self.max_red)
        if not self.crowded:  # a row other than this pick at the threshold (a spent one too: it only costs a look)
            red[row] = 0.0  # this pick's own redundancy is spent: below the threshold, as crowded is False
            top = red.item(red.argmax())  # the largest, or a nan: a look too many changes no pick
            self.crowded = not top < self.threshold

    def next(self, fallback_fill: bool) -> bool:
        """Take the next pick; False when none may be taken (every row left is a duplicate and
        there is no fallback fill)."""
        dup, max_red = self.dup, self.max_red
        skipped: tuple[tuple[int, float, int], ...] = ()
        if self.crowded:
            np.greater_equal(max_red, self.threshold_0d, out=dup)
            dup &= self.remaining
            if dup.item(dup.argmax()):  # any: argmax and item are C calls (`any` goes through Python)
                dups = dup.nonzero()[0]
                skipped = tuple(zip(dups.tolist(), max_red[dups].tolist(), self.cause[dups].tolist()))
                self.open[dups] = -np.inf
        mmr = np.subtract(self.open, np.multiply(self.penalty, max_red, out=self.mmr), out=self.mmr)
        row = int(mmr.argmax())  # the earliest free row of the largest mmr
        score = mmr.item(row)
        if score > -np.inf:  # finite (or +inf): a free row, as every other row's mmr is -inf
            self.take(row, score, False, skipped)
        elif (free := self.remaining & ~dup).any():  # every free row's mmr is -inf (never with finite scores), or nan
            row = row if free[row] else int(free.argmax())
            self.take(row, mmr.item(row), False, skipped)
        elif fallback_fill:
            self.take(int(self.remaining.argmax()), None, True, skipped)
        else:
            return False
        return True
