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
    """BM25 over one user's chunks; `scores(query)` gives one float per chunk (0 = no match).

    `arrays()` gives the index as plain arrays and `from_arrays` rebuilds it from them, so a
    store can keep it beside the vectors and a user opens without tokenising every chunk."""

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
        terms = np.where(ids > sep, ids - 1, ids)[~is_sep]
        docs = doc_of[~is_sep]
        size = max(len(texts), 1)
        # one (term, doc) cell per distinct pair, ordered by term then doc: a CSC matrix by hand
        keys, freqs = np.unique(terms * size + docs, return_counts=True)
        self._setup(list(vocab), keys % size, freqs, np.searchsorted(keys // size, np.arange(len(vocab) + 1)), lengths)

    def _setup(self, terms: list[str], docs: np.ndarray, freqs: np.ndarray, indptr: np.ndarray,
               lengths: np.ndarray) -> None:
        self.size = len(lengths)
        self.vocab = {t: i for i, t in enumerate(terms)}
        docs, freqs = np.asarray(docs), np.asarray(freqs)
        # integers kept as given (a saved index's int32, no copy of millions): scoring widens them exactly
        self._docs = docs if docs.dtype.kind in "iu" else docs.astype(np.int64)
        self._freqs = freqs if freqs.dtype.kind in "iuf" else freqs.astype(np.float64)
        self._indptr = np.asarray(indptr, dtype=np.int64)
        self._lengths = np.asarray(lengths, dtype=np.int64)
        self.idf = self._idf(np.diff(self._indptr))
        avgdl = self._lengths.sum() / self.size if self.size and self._lengths.sum() else 1.0
        self._norm = K1 * (1 - B + B * self._lengths / avgdl)

    def arrays(self) -> dict[str, np.ndarray]:
        """The index as arrays (`from_arrays` takes them back): terms as one NUL-separated UTF-8
        blob (a `\\w+` token never holds a NUL), the sparse matrix and the document lengths."""
        blob = SEP.join(self.vocab).encode("utf-8", "surrogatepass")  # the terms in id order
        return {"terms": np.frombuffer(blob, dtype=np.uint8), "docs": self._docs.astype(np.int32),
                "freqs": self._freqs.astype(np.int32), "indptr": self._indptr, "lengths": self._lengths}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "LexicalIndex":
        """The index `arrays()` gave; ValueError if they do not fit together."""
        blob = np.asarray(arrays["terms"], dtype=np.uint8).tobytes().decode("utf-8", "surrogatepass")
        terms = blob.split(SEP) if blob else []
        indptr, docs, lengths = arrays["indptr"], arrays["docs"], arrays["lengths"]
        if (len(indptr) != len(terms) + 1 or len(docs) != len(arrays["freqs"]) or (len(indptr) and indptr[-1] != len(docs))
                or (len(docs) and (docs.min() < 0 or docs.max() >= len(lengths)))):
            raise ValueError("the lexical index arrays do not fit together")
        ix = cls.__new__(cls)
        ix._setup(terms, docs, arrays["freqs"], indptr, lengths)
        return ix

    def _idf(self, doc_freq: np.ndarray) -> np.ndarray:
        """rank-bm25's idf, with `math.log` so every value is bit-identical to it: computed once
        per distinct document frequency (a few hundred among 10,000s of terms), and the mean for
        the floor summed term by term in order, as rank-bm25 sums it."""
        if not len(doc_freq):
            return np.zeros(0)
        n = self.size
        freqs, of_term = np.unique(doc_freq, return_inverse=True)
        idf = np.array([math.log(n - f + 0.5) - math.log(f + 0.5) for f in freqs.tolist()])[of_term]
        eps = EPSILON * (sum(idf.tolist()) / len(idf))
        return np.where(idf < 0, eps, idf)

    def scores(self, query: str) -> np.ndarray:
        return self.scores_of(tokenize(query))

    def scores_of(self, tokens: list[str]) -> np.ndarray:
        """BM25 of every document for a query already cut into terms: every posting of the
        query's terms gathered at once, each term's `count · idf · f · (k1 + 1) / (f + norm)` in
        that order, and a document's terms summed from 0 in the query's order of first use
        (`bincount` adds in the order given), term by term as a loop would."""
        found = [(t, count) for t, count in ((self.vocab.get(term), count) for term, count in Counter(tokens).items())
                 if t is not None]
        if not found:
            return np.zeros(self.size)
        terms = np.array([t for t, _ in found], dtype=np.int64)
        lo, hi = self._indptr[terms], self._indptr[terms + 1]
        lengths = hi - lo
        at = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        docs, f = self._docs[at], self._freqs[at].astype(np.float64)
        weight = np.repeat(np.array([c for _, c in found], dtype=np.float64) * self.idf[terms], lengths)
        return np.bincount(docs, weights=weight * f * (K1 + 1) / (f + self._norm[docs]), minlength=self.size)
