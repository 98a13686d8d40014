"""The lexical route: BM25 (rank-bm25's Okapi statistics) over `task_tag + " " + content` (SPEC §2)."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
from rank_bm25 import BM25Okapi

TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class LexicalIndex:
    """BM25Okapi over a user's chunks; scores a query with each distinct term once.

    `score = Σ_t count_q(t) · idf(t) · f(t,d)(k1+1) / (f(t,d) + k1(1 − b + b·|d|/avgdl))`,
    the same sum rank-bm25's `get_scores` takes over repeated query tokens, but fast for
    very long queries.
    """

    def __init__(self, texts: list[str]):
        docs = [tokenize(t) for t in texts]
        self.size = len(docs)
        self.bm25 = BM25Okapi(docs if any(docs) else [["\0"]] * max(len(docs), 1))
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for d, freqs in enumerate(self.bm25.doc_freqs[: self.size]):
            for term, f in freqs.items():
                self._postings.setdefault(term, ([], []))
                self._postings[term][0].append(d)
                self._postings[term][1].append(f)
        self._postings = {t: (np.array(ds), np.array(fs, dtype=np.float64)) for t, (ds, fs) in self._postings.items()}
        self._norm = self.bm25.k1 * (1 - self.bm25.b + self.bm25.b * np.array(self.bm25.doc_len[: self.size]) / self.bm25.avgdl) \
            if self.size else np.zeros(0)

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.size)
        k1 = self.bm25.k1
        for term, count in Counter(tokenize(query)).items():
            hit = self._postings.get(term)
            if hit is None:
                continue
            docs, f = hit
            out[docs] += count * self.bm25.idf.get(term, 0.0) * f * (k1 + 1) / (f + self._norm[docs])
        return out
