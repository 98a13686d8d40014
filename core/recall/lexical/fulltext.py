"""A lexical route that behaves like Memsense's (SPEC §10), for embedded stores: PostgreSQL-style
English full text instead of BM25.

- Words are runs of letters and digits, lowercased, split as PostgreSQL's parser splits the
  common cases: a URL is three tokens (url, host, path), an e-mail address or a decimal number
  one, a hyphenated word the whole plus each part. English stop words are dropped but keep
  their positions; the rest are reduced by the Snowball English stemmer (what PostgreSQL's
  `english` configuration uses).
- The query is read as `websearch_to_tsquery` reads it: every word required (AND), the word
  `or` between words makes alternatives, a leading `-` excludes a word; quotes are read as
  plain words (an approximation: PostgreSQL would require them adjacent).
- A chunk that matches is ranked by cover density as `ts_rank_cd` does with its default
  weights: each minimal stretch of text holding every query word (a cover) adds
  `0.1 / (1 + words in the cover that are not query words)`, summed over the covers.

How close this comes to PostgreSQL on real data is measured by
`tools/lexical_closeness.py` (figures in the README).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import cast

import numpy as np

WORD = re.compile(r"[^\W_]+", re.UNICODE)
TOKEN = re.compile(r"(?P<url>https?://(?P<host>[^\s/]+)(?P<path>/\S*)?)"
                   r"|(?P<email>[^\W_][\w.+-]*@[^\W_][\w-]*(?:\.[\w-]+)+)"
                   r"|(?P<float>\d+\.\d+)"
                   r"|(?P<hword>[^\W_]+(?:-[^\W_]+)+)"
                   r"|(?P<word>[^\W_]+)", re.UNICODE)

# The Snowball project's English stop-word list (127 words), the one PostgreSQL's `english`
# configuration loads; the tests compare it with the file PostgreSQL ships.
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing a an the and but if or
because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too very s
t can will just don should now
""".split())


@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer().stemWord(word)


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, stem it?) in order; each takes one position."""
    out: list[tuple[str, bool]] = []
    for m in TOKEN.finditer(text.lower()):
        kind = cast(str, m.lastgroup)  # every alternative of TOKEN is a named group
        if m.group("url"):
            host, path = m.group("host"), m.group("path")
            out += [(m.group("url")[m.start("host") - m.start():], False), (host, False)] + ([(path, False)] if path else [])
        elif kind in ("email", "float"):
            out.append((m.group(kind), False))
        elif kind == "hword":
            out.append((m.group(kind), False))
            out += [(part, True) for part in m.group(kind).split("-")]
        else:
            out.append((m.group(kind), True))
    return out


def lexemes(text: str) -> list[tuple[str, int]]:
    """(lexeme, position) of every non-stop word; positions count stop words too, from 1."""
    return [(stem(w) if stemmed else w, pos) for pos, (w, stemmed) in enumerate(_tokens(text), start=1)
            if w not in STOP_WORDS]


def parse_query(query: str) -> tuple[list[list[str]], set[str]]:
    """Alternatives (each a list of required lexemes) and excluded lexemes, as websearch reads them."""
    branches: list[list[str]] = [[]]
    excluded: set[str] = set()
    for raw in re.findall(r"-?[^\s\"]+", query):
        negative = raw.startswith("-")
        words = WORD.findall(raw.lower())
        if not words:
            continue
        if not negative and len(words) == 1 and words[0] == "or":
            if branches[-1]:
                branches.append([])
            continue
        kept = [stem(w) for w in words if w not in STOP_WORDS]
        if negative:
            excluded.update(kept)
        else:
            branches[-1].extend(kept)
    return [b for b in branches if b], excluded


def cover_density(positions: dict[str, list[int]], terms: list[str]) -> float:
    """Σ over the minimal covers of `terms` of 0.1 / (1 + positions in the cover not holding a term)."""
    wanted = list(dict.fromkeys(terms))
    if any(t not in positions for t in wanted):
        return 0.0
    events = sorted((p, t) for t in wanted for p in positions[t])
    total, start = 0.0, 0
    while True:
        # the earliest end: the first position by which every term has occurred since `start`
        seen: dict[str, int] = {}
        end = None
        for k in range(start, len(events)):
            p, t = events[k]
            seen[t] = k
            if len(seen) == len(wanted):
                end = k
                break
        if end is None:
            return total
        begin = min(seen.values())  # the latest occurrence of each term up to the end; the cover starts at the earliest
        items = end - begin + 1
        noise = (events[end][0] - events[begin][0]) - (items - 1)
        total += 0.1 / (1 + max(noise, 0))
        start = begin + 1


class FullTextIndex:
    """The Memsense-like lexical route over one user's chunks; `scores(query)`: one float per
    chunk, 0 = no match (so absent from the route), like `LexicalIndex`."""

    def __init__(self, texts: list[str]):
        self.size = len(texts)
        self._positions: list[dict[str, list[int]]] = []
        self._postings: dict[str, set[int]] = {}
        for d, text in enumerate(texts):
            pos: dict[str, list[int]] = {}
            for lex, p in lexemes(text):
                pos.setdefault(lex, []).append(p)
            self._positions.append(pos)
            for lex in pos:
                self._postings.setdefault(lex, set()).add(d)

    def matches(self, query: str) -> set[int]:
        branches, excluded = parse_query(query)
        found: set[int] = set()
        for terms in branches:
            docs = set.intersection(*(self._postings.get(t, set()) for t in terms))
            found |= docs
        for t in excluded:
            found -= self._postings.get(t, set())
        return found

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.size)
        branches, _ = parse_query(query)
        for d in self.matches(query):
            out[d] = sum(cover_density(self._positions[d], terms) for terms in branches) or 0.1
        return out
