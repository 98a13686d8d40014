"""The sparse BM25 route against rank-bm25's BM25Okapi as the oracle."""
from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from core.recall.lexical.bm25 import LexicalIndex, tokenize

WORDS = ["bees", "Honey", "ana", "ran", "race", "2024", "the", "a", "garden", "dog", "café", "naïve", "x_y", "ΣΟΦΙΑ"]


def corpus(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=rng.integers(0, 40))) + rng.choice(["", "!", ", ", "\x00odd"]) for _ in range(n)]
    texts[0] = ""
    return texts


@pytest.mark.parametrize("seed", range(5))
def test_scores_equal_rank_bm25(seed):
    texts = corpus(seed, 300)
    ix, oracle = LexicalIndex(texts), BM25Okapi([tokenize(t) for t in texts])
    for query in ("bees honey", "the the race the", "café naïve x_y σοφια", "unknown words", "a", "Garden, DOG!"):
        np.testing.assert_allclose(ix.scores(query), oracle.get_scores(tokenize(query)), rtol=1e-12, atol=0)


def test_every_idf_is_rank_bm25s_including_the_epsilon_floor():
    texts = corpus(9, 200)
    ix, oracle = LexicalIndex(texts), BM25Okapi([tokenize(t) for t in texts])
    assert {t: float(ix.idf[i]) for t, i in ix.vocab.items()} == oracle.idf  # bit-identical, common words floored


def test_empty_corpora_and_documents():
    assert LexicalIndex([]).scores("bees").shape == (0,)
    assert LexicalIndex(["", "", ""]).scores("bees").tolist() == [0.0, 0.0, 0.0]
    assert LexicalIndex(["bees", ""]).scores("").tolist() == [0.0, 0.0]
