"""How a BM25 route reads words: the analyzer (SPEC §15). `plain` is the lexical route of SPEC §2
(lowercased `\\w+` tokens, nothing removed); the others drop English stop words, reduce words
to their Snowball English stem, or both (`english`). Stop words and the stemmer are the ones
Memsense's PostgreSQL `english` configuration uses (`core.recall.lexical.fulltext`).

An analyzed index is made from the plain one without reading the texts again (`analyzed`):
analysis maps each token alone, so the analyzed index's term counts are the plain index's counts
summed over the terms that map to the same stem, and a document's length is the count of its
tokens that are not stop words. BM25 over the analyzed index is then exactly BM25 over the
analyzed tokens (rank-bm25 is the tests' oracle).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import MemsenseError
from core.recall.lexical.bm25 import LexicalIndex, tokenize
from core.recall.lexical.fulltext import STOP_WORDS, stem


@dataclass(frozen=True)
class Analyzer:
    name: str
    stop_words: bool
    stemming: bool

    def term(self, token: str) -> str | None:
        """The indexed term of one lowercased token; None for a dropped stop word."""
        if self.stop_words and token in STOP_WORDS:
            return None
        return stem(token) if self.stemming else token

    def tokens(self, text: str) -> list[str]:
        """The terms of a text (a query or a document), in order."""
        return [t for t in map(self.term, tokenize(text)) if t is not None]


ANALYZERS: dict[str, Analyzer] = {a.name: a for a in (
    Analyzer("plain", False, False), Analyzer("stop", True, False), Analyzer("stem", False, True),
    Analyzer("english", True, True))}
"""Every analyzer by name; `plain` is SPEC §2's lexical route."""
PLAIN = "plain"


def analyzer(name: str) -> Analyzer:
    """The analyzer called `name`, or one error line naming the choices."""
    try:
        return ANALYZERS[name]
    except KeyError:
        raise MemsenseError(f"unknown analyzer {name!r}; choose {', '.join(ANALYZERS)}") from None


def analyzed(index: LexicalIndex, how: Analyzer) -> LexicalIndex:
    """The BM25 index of the same documents read by `how`, built from the plain `index`."""
    if not how.stop_words and not how.stemming:
        return index
    arrays = index.arrays()
    terms = list(index.vocab)
    mapped = [how.term(t) for t in terms]
    new_terms = list(dict.fromkeys(t for t in mapped if t is not None))
    new_id = {t: i for i, t in enumerate(new_terms)}
    code = np.array([-1 if t is None else new_id[t] for t in mapped], dtype=np.int64)
    indptr = arrays["indptr"]
    entry_term = np.repeat(code, np.diff(indptr))
    docs, freqs = arrays["docs"].astype(np.int64), arrays["freqs"].astype(np.int64)
    keep = entry_term >= 0
    size = max(index.size, 1)
    keys = entry_term[keep] * size + docs[keep]
    cells, inverse = np.unique(keys, return_inverse=True)
    summed = np.bincount(inverse, weights=freqs[keep], minlength=len(cells)).astype(np.int64)
    lengths = np.bincount(docs[keep], weights=freqs[keep], minlength=index.size).astype(np.int64)
    blob = "\x00".join(new_terms).encode("utf-8", "surrogatepass")
    return LexicalIndex.from_arrays({
        "terms": np.frombuffer(blob, dtype=np.uint8), "docs": (cells % size).astype(np.int32),
        "freqs": summed.astype(np.int32), "indptr": np.searchsorted(cells // size, np.arange(len(new_terms) + 1)),
        "lengths": lengths})


class AnalyzedIndex:
    """A BM25 index whose queries are read by the same analyzer as its documents."""

    def __init__(self, index: LexicalIndex, how: Analyzer):
        self.how = how
        self.index = analyzed(index, how)
        self.size = self.index.size

    @classmethod
    def of(cls, index: LexicalIndex, how: Analyzer) -> "AnalyzedIndex":
        """The analyzed index from one already read by `how` (`analyzed(plain, how)`, kept by a store)."""
        out = cls.__new__(cls)
        out.how, out.index, out.size = how, index, index.size
        return out

    def scores(self, query: str) -> np.ndarray:
        return self.index.scores_of(self.how.tokens(query))
