"""Memory v2's linear hybrid (SPEC §9): `score = wk · bm25_norm + ws · cosine_norm`
(0.3 / 0.7), each min-max normalised over the candidates; scores below `linear_min_score`
(0.15) are dropped and at most `linear_max_results` (10) rows go on."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.config import Config
from core.rank.fusion.base import LEXICAL, VEC_FULL, minmax
from core.records import Chunk
def fuse(ranks: np.ndarray, scores: np.ndarray, live: np.ndarray, cfg: Config,
           chunks: Sequence[Chunk] = ()) -> tuple[np.ndarray, np.ndarray]:
    """`score = wk · bm25_norm + ws · cosine_norm` over the candidates (§9 Memory v2).

    Candidates = rows found by any live route. `bm25_norm`: the lexical route's raw BM25,
    0 for a candidate it did not match (BM25 of no match), min-max normalised over the
    candidates; all 0 when lexical is off or matched nothing. `cosine_norm`: the `vec_full`
    raw cosine min-max normalised over the candidates it holds; 0 for the others (they ranked
    beyond its list, below every listed cosine). Equal values normalise to 1.
    `wk = linear_keyword_weight` (0.3), `ws = linear_semantic_weight` (0.7); route weights only
    switch routes on or off. Contributions: the keyword part under `lexical`, the semantic part
    under `vec_full`.
    """
    cand = np.asarray(live.any(axis=1))
    lex, vec = live[:, LEXICAL] & cand, live[:, VEC_FULL] & cand
    bm25 = np.where(lex, np.nan_to_num(scores[:, LEXICAL]), 0.0)
    bm25_norm = minmax(bm25, cand) if lex.any() else np.zeros(len(bm25))
    cos_norm = minmax(np.nan_to_num(scores[:, VEC_FULL]), vec)
    contrib = np.zeros(live.shape, dtype=np.float64)
    contrib[:, LEXICAL] = cfg.linear_keyword_weight * bm25_norm
    contrib[:, VEC_FULL] = cfg.linear_semantic_weight * cos_norm
    return contrib.sum(axis=1), contrib


def cut(fused: np.ndarray, ranks: np.ndarray, live: np.ndarray, cfg: Config,
               chunks: Sequence[Chunk]) -> dict[int, str]:
    """Drop candidates scoring below `linear_min_score`, then keep the best
    `linear_max_results` of the rest (score descending, ties by id)."""
    found = np.flatnonzero(live.any(axis=1))
    drops = {int(i): f"linear score {fused[i]:.4f} is below the cut {cfg.linear_min_score}"
             for i in found if fused[i] < cfg.linear_min_score}
    above = np.array([i for i in found if int(i) not in drops], dtype=np.int64)
    ordered = above[np.argsort(-fused[above], kind="stable")]
    for place, i in enumerate(ordered[cfg.linear_max_results:], start=cfg.linear_max_results + 1):
        drops[int(i)] = (f"linear score {fused[i]:.4f} ranks #{place}; the linear scheme returns at most "
                         f"{cfg.linear_max_results} results")
    return drops
