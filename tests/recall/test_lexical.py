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


def term_by_term(ix: LexicalIndex, tokens: list[str]) -> np.ndarray:
    """The score the plain way: each distinct term in order of first use, its postings added in."""
    out = np.zeros(ix.size)
    for term in dict.fromkeys(tokens):
        if term in ix.vocab:
            t = ix.vocab[term]
            lo, hi = ix._indptr[t], ix._indptr[t + 1]
            docs, f = ix._docs[lo:hi], ix._freqs[lo:hi].astype(np.float64)
            out[docs] += tokens.count(term) * ix.idf[t] * f * 2.5 / (f + ix._norm[docs])
    return out


@pytest.mark.parametrize("seed", range(3))
def test_scores_are_the_term_by_term_sums_bit_for_bit_also_from_a_saved_index(seed):
    """All postings at once give each document the same floats as adding the terms one by one
    (repeated query words, words not in the corpus, an index read back from its int32 arrays)."""
    texts = corpus(seed, 300)
    built = LexicalIndex(texts)
    for ix in (built, LexicalIndex.from_arrays(built.arrays())):
        for query in ("bees honey bees", "the the race the", "café naïve x_y σοφια garden", "unknown words", "", "a dog a"):
            assert ix.scores(query).tolist() == term_by_term(ix, tokenize(query)).tolist()


def test_every_idf_is_rank_bm25s_including_the_epsilon_floor():
    texts = corpus(9, 200)
    ix, oracle = LexicalIndex(texts), BM25Okapi([tokenize(t) for t in texts])
    assert {t: float(ix.idf[i]) for t, i in ix.vocab.items()} == oracle.idf  # bit-identical, common words floored


def test_empty_corpora_and_documents():
    assert LexicalIndex([]).scores("bees").shape == (0,)
    assert LexicalIndex(["", "", ""]).scores("bees").tolist() == [0.0, 0.0, 0.0]
    assert LexicalIndex(["bees", ""]).scores("").tolist() == [0.0, 0.0]
