"""The lexical route: Okapi BM25 over `task_tag + " " + content` (SPEC §2), as sparse arrays.

The statistics are rank-bm25's `BM25Okapi` (k1 = 1.5, b = 0.75, epsilon = 0.25):
`idf(t) = ln((N − n_t + 0.5) / (n_t + 0.5))`, a negative idf replaced by `epsilon · mean idf`,
and `score(d) = Σ_t count_q(t) · idf(t) · f(t,d)(k1+1) / (f(t,d) + k1(1 − b + b·|d|/avgdl))`,
the sum rank-bm25's `get_scores` takes over repeated query tokens. The index is one
compressed sparse column matrix of term frequencies, so building it for 100,000 chunks and
scoring a query touch only arrays; rank-bm25 is the tests' oracle.
"""
from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

TOKEN = re.compile(r"\w+", re.UNICODE)
SEP = "\x00"
TOKEN_OR_SEP = re.compile(r"\w+|\x00", re.UNICODE)
K1, B, EPSILON = 1.5, 0.75, 0.25


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class LexicalIndex:
    """BM25 over one user's chunks; `scores(query)` gives one float per chunk (0 = no match)."""

    def __init__(self, texts: list[str]):
        # one regex pass over all texts joined by a separator that is not a word character
        joined = SEP.join(t.replace(SEP, " ") for t in texts).lower() + SEP
        tokens = TOKEN_OR_SEP.findall(joined)
        vocab = {t: i for i, t in enumerate(dict.fromkeys(tokens))}  # first-occurrence order, as rank-bm25
        ids = np.fromiter(map(vocab.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        sep = vocab.pop(SEP)
        is_sep = ids == sep
        doc_of = np.cumsum(is_sep) - is_sep
        lengths = np.bincount(doc_of[~is_sep], minlength=len(texts)).astype(np.int64)
        term_ids = np.where(ids > sep, ids - 1, ids)[~is_sep]
        vocab = {t: (i - 1 if i > sep else i) for t, i in vocab.items()}
        self.size = len(texts)
        self.vocab = vocab
        docs = doc_of[~is_sep]
        terms = term_ids
        # one (term, doc) cell per distinct pair, ordered by term then doc: a CSC matrix by hand
        keys, freqs = np.unique(terms * max(self.size, 1) + docs, return_counts=True)
        self._docs = keys % max(self.size, 1)
        self._freqs = freqs.astype(np.float64)
        self._indptr = np.searchsorted(keys // max(self.size, 1), np.arange(len(vocab) + 1))
        self.idf = self._idf(np.diff(self._indptr))
        avgdl = lengths.sum() / self.size if self.size and lengths.sum() else 1.0
        self._norm = K1 * (1 - B + B * lengths / avgdl)

    def _idf(self, doc_freq: np.ndarray) -> np.ndarray:
        """rank-bm25's idf, term by term with `math.log` so every value is bit-identical to it."""
        n = self.size
        idf = [math.log(n - f + 0.5) - math.log(f + 0.5) for f in doc_freq.tolist()]
        if not idf:
            return np.zeros(0)
        eps = EPSILON * (sum(idf) / len(idf))
        return np.array([eps if v < 0 else v for v in idf])

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.size)
        for term, count in Counter(tokenize(query)).items():
            t = self.vocab.get(term)
            if t is None:
                continue
            lo, hi = self._indptr[t], self._indptr[t + 1]
            docs, f = self._docs[lo:hi], self._freqs[lo:hi]
            out[docs] += count * self.idf[t] * f * (K1 + 1) / (f + self._norm[docs])
        return out
