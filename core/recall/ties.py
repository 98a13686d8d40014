"""Route rankings with float noise counted as ties: score descending, then id (SPEC §2).

A route's raw scores (cosine from the vector search, BM25 from the lexical index) carry
last-digit noise that depends on how the arithmetic was batched: the same stored vector can
score 0.51234567 in one process and 0.51234568 in the next. Every turn of a session carries
the session's facet vectors, so exact ties are common, and ordering them by noise made the
app, the CLI and evaluation rank differently for the same settings. Every route ranking is
therefore made here, once (`core.recall.engine` calls it for the dense routes of any store backend
and for BM25): scores within `TIE_TOLERANCE` of a tie group's best score are one group,
ordered by id and reported with that best score, so whatever is computed from the scores
afterwards (normalisation, fusion) sees exact ties too.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from core.recall.store import top_rows

TIE_TOLERANCE = 1e-6
"""Scores this close (relative to their size, at least this absolute) are equal. Float32
cosines are noisy near 1e-7; genuinely different scores closer than 1e-6 carry no order."""


WALK_UP_TO = 128
"""A list this short is grouped by walking it whole in plain floats: cheaper here than finding its
runs with array calls (a list a recall ranks is its depth + 1 long, 65 by default)."""
PRESELECT_FROM = 1024
"""Route lists this long are cut to their candidates before they are ranked (`_candidates`):
at 2,000 chunks ranking seven routes 64 deep took 155 us with a partition of every score, 88 us
from the candidates (4,000: 272 against 94; 8,000: 532 against 163)."""
SAMPLE = 1024
"""At most about this many scores of each route the bar of that cut is read from."""
STRIDE = 8
"""The bar is read from at least every `STRIDE`-th score: a shorter list's sample is an eighth of it."""
SORT_UP_TO = 512
"""A route with at most this many hits in its full scores is ranked by sorting them all
(`ranked_scores`): cheaper than partitioned fetches up to about 600 hits at depth 64 here (one
sort of 500 random scores 61-66 us against 70-75, of 1,000: 83 against 47)."""


def tied(a: float, b: float) -> bool:
    """True when two route scores differ only by float noise."""
    return abs(a - b) <= TIE_TOLERANCE * max(1.0, abs(a), abs(b))


def rank_route(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One route's hits best first: `(rows, scores)` with noise-tied scores grouped, each group
    ordered by row (rows follow memory_id order) and every member given the group's best score.

    Groups start at their best score and take every following score `tied` to it. A group only
    spans consecutive gaps below the tolerance at the list's largest scale, so only runs of such
    gaps are walked; the rest of an 8,000-deep list stays as sorted.
    """
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((rows, -scores))
    rows, scores = rows[order], scores[order]
    if len(rows) < 2:
        return rows, scores
    close = _close(scores)
    if not close.any():
        return rows, scores
    rows, scores = rows.copy(), scores.copy()
    if len(rows) <= WALK_UP_TO:
        _group_run(rows, scores, 0, len(rows))
    else:
        _group(rows, scores, close)
    return rows, scores


def _close(scores: np.ndarray) -> np.ndarray:
    """For sorted scores (two or more), whether each gap is within the tolerance at the list's
    largest scale: a pair `tied` has such a gap, so where none is, no group forms."""
    return (scores[:-1] - scores[1:]) <= TIE_TOLERANCE * max(1.0, float(np.abs(scores).max()))


def _group(rows: np.ndarray, scores: np.ndarray, close: np.ndarray) -> None:
    """Group, in place, every run of sorted scores whose gaps are `close` (`close[i]`: the gap
    between `i` and `i + 1`). Runs of two, the common case, are grouped at once; so are longer
    runs whose last score is `tied` to their head even at the head's own scale (exact ties: BM25
    of equal documents, a session's facet vectors), each then one group ordered by row. Any
    other run is walked."""
    starts = np.flatnonzero(close & ~np.concatenate(([False], close[:-1])))
    ends = np.flatnonzero(close & ~np.concatenate((close[1:], [False]))) + 2
    pairs = ends - starts == 2
    _group_pairs(rows, scores, starts[pairs])
    if pairs.all():
        return
    starts, ends = starts[~pairs], ends[~pairs]
    heads = scores[starts]
    whole = heads - scores[ends - 1] <= TIE_TOLERANCE * np.maximum(1.0, np.abs(heads))
    if whole.any():
        lengths = (ends - starts)[whole]
        run = np.repeat(np.arange(len(lengths)), lengths)
        at = np.arange(len(run)) + np.repeat(starts[whole] - np.cumsum(lengths) + lengths, lengths)
        members = rows[at]
        rows[at] = members[np.lexsort((members, run))]
        scores[at] = np.repeat(heads[whole], lengths)
    for a, b in zip(starts[~whole].tolist(), ends[~whole].tolist()):
        _group_run(rows, scores, a, b)


def _group_pairs(rows: np.ndarray, scores: np.ndarray, at: np.ndarray) -> None:
    """Runs of two (`at`, `at + 1`) all at once: one group when `tied`."""
    head, tail = scores[at], scores[at + 1]
    same = np.abs(head - tail) <= TIE_TOLERANCE * np.maximum(1.0, np.maximum(np.abs(head), np.abs(tail)))
    a = at[same]
    lo, hi = np.minimum(rows[a], rows[a + 1]), np.maximum(rows[a], rows[a + 1])
    rows[a], rows[a + 1] = lo, hi
    scores[a + 1] = scores[a]


def _group_run(rows: np.ndarray, scores: np.ndarray, a: int, b: int) -> None:
    """Group `[a, b)` in place: each group is its head and every later score `tied` to it.
    Runs are short, so plain floats beat array calls here."""
    seg_rows, seg_scores = rows[a:b].tolist(), scores[a:b].tolist()
    _walk(seg_rows, seg_scores, b - a)
    rows[a:b], scores[a:b] = seg_rows, seg_scores


def _walk(rows: list[int], scores: list[float], stop: int) -> None:
    """Group, in place, each group of the sorted lists that starts before `stop`: its head and
    every later score `tied` to it, ordered by row, each given the head's score. A later score
    within the head's own scale of it (`head - x`, as `tied` computes it for `x <= head`) is
    tied without asking, so `tied` decides only where a group may end."""
    start, n = 0, len(scores)
    while start < min(stop, n):
        head, end = scores[start], start + 1
        near = TIE_TOLERANCE * max(1.0, abs(head))
        while end < n and (head - scores[end] <= near or tied(head, scores[end])):
            end += 1
        if end - start > 1:
            rows[start:end] = sorted(rows[start:end])
            scores[start:end] = [head] * (end - start)
        start = end


def ranked_lists(fetch: Callable[[list[str], int], Mapping[str, tuple[np.ndarray, np.ndarray]]],
                 routes: Sequence[str], depth: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each route's list to `depth`, ranked by `rank_route`, from `fetch(routes, n)` (a store's
    best `n` rows and raw scores per route). One hit more than asked is fetched; when a tie
    group runs across the cut, that route is fetched twice as deep until the group is whole,
    so which tied hits make the cut never depends on how the store broke the tie."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    pending, want = list(routes), depth + 1
    while pending:
        for route, (rows, scores) in fetch(pending, want).items():
            rows, scores = rank_route(rows, scores)
            if len(rows) < want or scores[depth - 1] != scores[-1]:
                out[route] = (rows[:depth], scores[:depth])
        pending, want = [r for r in pending if r not in out], want * 2
    return out


def ranked_rows(scores: np.ndarray, depth: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """`ranked_lists` over a score matrix `(k, n)` (one route a row; non-finite = no hit), each
    list to `depth`, the same arrays the plain path gives with `core.recall.store.top_rows` as
    the fetch, made for all routes at once (one partition, one sort, one tie walk).

    Which of several rows equal to the cut's score the partition kept does not matter: the
    kept scores are the same, a list is cut only where its tie group ends before the last
    kept score (so every such row lies past the cut), and otherwise the route goes to the
    plain path, as does a route with fewer finite scores than fetched."""
    k, n = scores.shape
    want = depth + 1
    if n <= want or k == 0:
        return [ranked_scores(scores[j], depth) for j in range(k)]
    rows, kept = _best_columns(scores, want)
    is_finite = np.isfinite(kept)
    finite = np.asarray(is_finite.all(axis=1))
    clean = np.where(is_finite, kept, 0.0)  # routes with a non-finite score go the plain way
    scale = TIE_TOLERANCE * np.maximum(1.0, np.abs(clean).max(axis=1))
    gaps = clean[:, :-1] - clean[:, 1:]
    close = np.zeros((k, want), dtype=bool)  # a last column of False: no run crosses into the next route
    close[:, :-1] = gaps <= scale[:, None]
    close &= finite[:, None]
    flat_close = close.reshape(-1)[:-1]
    if flat_close.any():
        _group(rows.reshape(-1), kept.reshape(-1), flat_close)
    cut = finite & (kept[:, depth - 1] != kept[:, -1])
    return [(rows[j, :depth], kept[j, :depth]) if cut[j] else ranked_scores(scores[j], depth) for j in range(k)]


def _best_columns(scores: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's `want` largest scores, best first, ties by column: (columns int64, scores
    float64), each `(k, want)`. Which of several columns equal to the cut's score are kept is
    left to the partition (see `ranked_rows`). A matrix `PRESELECT_FROM` or more wide is first
    cut to the columns at or above a bar read from a sample of every row (`_candidates`)."""
    k, n = scores.shape
    if n >= PRESELECT_FROM and want <= n // 8:  # deeper, the cut would keep over a quarter: refused
        found = _candidates(scores, want)
        if found is not None:
            return found
    line = np.arange(k)[:, None]  # each route's own row of the matrix, for indexing it by column
    part = np.argpartition(scores, n - want, axis=1)[:, n - want:]
    values = scores[line, part]
    order = np.lexsort((part, -values), axis=1)
    return part[line, order].astype(np.int64), values[line, order].astype(np.float64)


def _candidates(scores: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray] | None:
    """`_best_columns` from the columns at or above a bar, or None (then the whole rows are
    partitioned). A row's bar is a score of every `max(STRIDE, n // SAMPLE)`-th column, far enough down that
    about twice `want` of the row's scores lie above it; the result is exact whatever bar
    is read, since it is used only when every row keeps at least `want` columns (each kept
    score is at least the bar, each dropped one below it or NaN, which no list holds) and no
    more than a quarter of all of them."""
    k, n = scores.shape
    sample = scores[:, :: max(STRIDE, n // SAMPLE)]
    m = sample.shape[1]
    place = m - 1 - min(m - 1, 2 * want * m // n + 2)
    bar = np.partition(sample, place, axis=1)[:, place]
    line, column = np.divmod(np.flatnonzero(scores >= bar[:, None]), n)  # row by row, columns ascending
    counts = np.bincount(line, minlength=k)
    if counts.min() < want or len(line) > k * n // 4:
        return None
    values = scores[line, column]
    order = np.lexsort((column, -values, line))  # each row's best first, ties by column
    first = (np.cumsum(counts) - counts)[:, None] + np.arange(want)
    picked = order[first]
    return column[picked].astype(np.int64), values[picked].astype(np.float64)


def ranked_scores(scores: np.ndarray, depth: int, positive: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One route's list to `depth` from its full scores (one per row; a hit is a finite score,
    with `positive` a finite score above 0: BM25's no match is no hit), the same arrays as
    `ranked_lists` fetching `top_rows` of its hits.

    Up to `SORT_UP_TO` hits are sorted whole and grouped from the top until the group at the
    cut is whole: the groups of a list's first places are the same however far it goes on, and
    the fetches of `ranked_lists` stop at the first whole group at the cut. More hits go
    through `ranked_lists`, whose fetches partition."""
    hit = _hits(scores, positive)
    values = scores[hit]
    if len(hit) > SORT_UP_TO:
        def fetch(_: list[str], n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
            rows = hit[top_rows(values, n)]  # the hits' order is the rows': ties stay by row
            return {"": (rows, scores[rows])}

        return ranked_lists(fetch, [""], depth)[""]
    values = values.astype(np.float64)
    order = np.lexsort((hit, -values))
    rows, values = hit[order].astype(np.int64), values[order]
    top = values[: depth + 1]  # up to the first place past the cut: no gap close there, no group to walk
    if len(top) < 2 or not _close(top).any():
        return rows[:depth], values[:depth]
    row_list, score_list = rows.tolist(), values.tolist()
    _walk(row_list, score_list, depth)
    return np.array(row_list[:depth], dtype=np.int64), np.array(score_list[:depth], dtype=np.float64)


def list_reach(scores: np.ndarray, depth: int, positive: bool = False) -> np.ndarray:
    """The rows of one route's full scores (hits as in `ranked_scores`) that a list at most
    `depth` deep can hold, ascending: every hit within the tolerance at the largest scale of the
    `depth + 1`-th best. A list that deep ranked from these rows alone (every other row no hit)
    is the same list: its last group starts at a score at least the `depth`-th best and takes
    only scores `tied` to it, so at most that tolerance below; where the full list would go on
    past these rows, it goes on by scores no such group takes."""
    rows = _hits(scores, positive)
    if len(rows) <= depth + 1:
        return rows
    values = scores[rows].astype(np.float64)
    nth = np.partition(values, len(values) - depth - 1)[len(values) - depth - 1]
    bar = nth - 2 * TIE_TOLERANCE * max(1.0, float(np.abs(values).max()))  # twice: the scale's own rounding
    return rows[values >= bar]


def _hits(scores: np.ndarray, positive: bool) -> np.ndarray:
    """The rows of one route's full scores that are hits: a finite score, with `positive` a finite
    score above 0 (BM25's no match is no hit)."""
    return np.flatnonzero((scores > 0) & (scores < np.inf) if positive else np.isfinite(scores))
