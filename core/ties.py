"""Route rankings with float noise counted as ties: score descending, then id (SPEC §2).

A route's raw scores (cosine from the vector search, BM25 from the lexical index) carry
last-digit noise that depends on how the arithmetic was batched: the same stored vector can
score 0.51234567 in one process and 0.51234568 in the next. Every turn of a session carries
the session's facet vectors, so exact ties are common, and ordering them by noise made the
app, the CLI and evaluation rank differently for the same settings. Every route ranking is
therefore made here, once (`core.engine` calls it for the dense routes of any store backend
and for BM25): scores within `TIE_TOLERANCE` of a tie group's best score are one group,
ordered by id and reported with that best score, so whatever is computed from the scores
afterwards (normalisation, fusion) sees exact ties too.
"""
from __future__ import annotations

import numpy as np

TIE_TOLERANCE = 1e-6
"""Scores this close (relative to their size, at least this absolute) are equal. Float32
cosines are noisy near 1e-7; genuinely different scores closer than 1e-6 carry no order."""


def tied(a: float, b: float) -> bool:
    """True when two route scores differ only by float noise."""
    return abs(a - b) <= TIE_TOLERANCE * max(1.0, abs(a), abs(b))


def rank_route(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One route's hits best first: `(rows, scores)` with noise-tied scores grouped, each group
    ordered by row (rows follow memory_id order) and every member given the group's best score.

    Groups start at their best score and take every following score `tied` to it.
    """
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((rows, -scores))
    rows, scores = rows[order], scores[order]
    out_rows, out_scores = np.empty_like(rows), np.empty_like(scores)
    start = 0
    while start < len(rows):
        head = float(scores[start])
        end = start + 1
        while end < len(rows) and tied(head, float(scores[end])):
            end += 1
        out_rows[start:end] = np.sort(rows[start:end])
        out_scores[start:end] = head
        start = end
    return out_rows, out_scores


def cut_is_clean(scores: np.ndarray, limit: int, exhausted: bool) -> bool:
    """Whether a ranked list (from `rank_route`) fetched one past `limit` can be cut at `limit`
    without choosing among a tie group by chance: the list was exhausted, or the last fetched
    hit is in a later group than the hit at the cut."""
    return exhausted or len(scores) <= limit or scores[limit - 1] != scores[-1]
