"""The session routes (SPEC §15, beyond Memsense): routes that rank whole sessions, not chunks.

- `session_lexical`: BM25 over one document per session, its date header and every message
  line (the text of its session chunks joined, so not split at 4,000 characters), read by an
  analyzer (`core.recall.lexical.analyzer`; English stop words and Snowball stemming by default).
- `session_dense`: the session's best turn by cosine of the query to its `vec_full` vectors
  (`max`, the default), or the cosine to the mean of its turn vectors (`mean`), or the mean of its
  two best turns (`top2`); a session with no turn chunks is scored by its session chunks.

A session's rank and score on these routes apply to its session chunks (every session chunk of
a session split at 4,000 characters gets the session's rank): the session chunk carries them into
fusion and the turn-support step (§4), as SPEC §15 says. Turn chunks never carry them, so a
store with no session chunks (turn mode) has no rows for them and they find nothing there.
Ties between sessions break by the session's first row, i.e. by memory_id, as every route's do.
The index is built when a user is first recalled (`build`): from the session BM25 indexes the
store keeps (`session_lexicons`, written at ingest), or else from the user's session chunks.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from core.errors import MemsenseError
from core.recall.lexical.analyzer import PLAIN, AnalyzedIndex, Analyzer, analyzed, analyzer
from core.recall.lexical.bm25 import LexicalIndex
from core.recall.ties import ranked_scores
from core.records import Chunk

NO_ROWS = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int32))
AGGREGATIONS: tuple[str, ...] = ("max", "mean", "top2")
"""How `session_dense` scores a session from its turns' cosines (measured by tools/session_routes.py)."""
DEFAULT_AGGREGATION = "max"
DEFAULT_SESSION_ANALYZER = "english"


def session_document(parts: Sequence[Chunk]) -> str:
    """A session's whole text: its session chunks' user sides (header, then every message line), joined."""
    return "\n\n".join(c.user_text for c in parts)


@dataclass(frozen=True, eq=False)
class SessionIndex:
    """One user's sessions as documents (`codes[i]` is document i's session code)."""

    codes: np.ndarray  # int64 session codes with at least one session chunk, ascending
    rows: list[np.ndarray]  # document i -> its session chunks' rows (ascending)
    lexical: AnalyzedIndex
    members: np.ndarray  # rows whose vec_full scores a session, grouped by document
    starts: np.ndarray  # document i's members start at members[starts[i]]
    means: np.ndarray  # float32 (documents, d): unit mean of each document's member vectors (`mean` only, else empty)
    aggregation: str

    @classmethod
    def build(cls, chunks: Sequence[Chunk], session_rows: Sequence[np.ndarray], session_of: np.ndarray,
              is_turn: np.ndarray, vec_full: np.ndarray, how: Analyzer, aggregation: str = DEFAULT_AGGREGATION,
              saved: Mapping[str, LexicalIndex] | None = None) -> "SessionIndex":
        """The index of every session that has session chunks (`session_rows[code]`, ascending rows).
        `saved`: BM25 indexes of the session documents by analyzer name (`session_lexicons`, kept
        in the store's columns file): the documents are then neither decoded nor read."""
        if aggregation not in AGGREGATIONS:
            raise MemsenseError(f"unknown session_dense aggregation {aggregation!r}; choose {', '.join(AGGREGATIONS)}")
        codes, rows = documents(session_rows)
        turns = np.flatnonzero(is_turn)
        turns = turns[np.argsort(session_of[turns], kind="stable")]
        bounds = np.searchsorted(session_of[turns], np.stack([codes, codes + 1]))
        groups = [turns[a:b] if b > a else rs for a, b, rs in zip(bounds[0].tolist(), bounds[1].tolist(), rows)]
        members = np.concatenate(groups) if groups else np.zeros(0, np.int64)
        starts = np.cumsum([0, *map(len, groups)])[:-1].astype(np.int64)
        dim = vec_full.shape[1] if vec_full.ndim == 2 else 1
        means = _means(groups, vec_full, dim) if aggregation == "mean" else np.zeros((0, dim), dtype=np.float32)
        return cls(codes, rows, _lexical(chunks, rows, how, saved or {}), members, starts, means, aggregation)

    @property
    def size(self) -> int:
        return len(self.codes)

    def lexical_scores(self, query: str) -> np.ndarray:
        """BM25 of every session document (0 = no match)."""
        return self.lexical.scores(query)

    def dense_scores(self, cosines: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Every session's `session_dense` score from the query's cosine with each row's vec_full
        (`cosines`, -inf where a row has no vector) or the query vector (`mean`)."""
        if not self.size:
            return np.zeros(0)
        if self.aggregation == "mean":
            out = self.means.astype(np.float64) @ np.asarray(query, dtype=np.float64)
            return np.where(self.means.any(axis=1), out, -np.inf)
        values = np.asarray(cosines, dtype=np.float64)[self.members]
        if self.aggregation == "max":
            return np.maximum.reduceat(values, self.starts)
        return _top2(values, self.starts)

    def hits(self, scores: np.ndarray, depth: int, lexical: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The route's list to `depth` sessions as pool entries: (rows, scores, ranks), every session
        chunk of a ranked session at the session's rank and score."""
        docs, values = ranked_scores(scores, depth, positive=lexical)
        if not len(docs):
            return NO_ROWS
        flat, bounds = self._flat_rows
        starts, counts = bounds[docs], bounds[docs + 1] - bounds[docs]
        ranks = np.arange(1, len(docs) + 1, dtype=np.int32)
        if (counts == 1).all():  # a session chunk each (none split at 4,000 characters)
            return flat[starts], values, ranks
        at = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        return flat[at], np.repeat(values, counts), np.repeat(ranks, counts)

    @cached_property
    def _flat_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Every document's rows in one array, document after document, and where each starts
        (a last entry: where they end)."""
        bounds = np.cumsum([0, *map(len, self.rows)]).astype(np.int64)
        return (np.concatenate(self.rows).astype(np.int64) if self.rows else np.zeros(0, np.int64)), bounds


def documents(session_rows: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sessions that are documents (those with session chunks): their codes, ascending, and rows."""
    codes = np.array([s for s, rows in enumerate(session_rows) if len(rows)], dtype=np.int64)
    return codes, [np.asarray(session_rows[s], dtype=np.int64) for s in codes.tolist()]


def session_lexicons(chunks: Sequence[Chunk], session_rows: Sequence[np.ndarray]) -> dict[str, LexicalIndex]:
    """The session documents' BM25 indexes a store keeps: `plain`, and the default analyzer's."""
    plain = _plain_lexicon(chunks, documents(session_rows)[1])
    return {PLAIN: plain, DEFAULT_SESSION_ANALYZER: analyzed(plain, analyzer(DEFAULT_SESSION_ANALYZER))}


def _lexical(chunks: Sequence[Chunk], rows: list[np.ndarray], how: Analyzer,
             saved: Mapping[str, LexicalIndex]) -> AnalyzedIndex:
    own = saved.get(how.name)
    if own is not None:
        return AnalyzedIndex.of(own, how)
    plain = saved.get(PLAIN) or _plain_lexicon(chunks, rows)
    return AnalyzedIndex(plain, how)


def _plain_lexicon(chunks: Sequence[Chunk], rows: list[np.ndarray]) -> LexicalIndex:
    """BM25 over the session documents made of each session's chunk `rows`, unanalysed."""
    return LexicalIndex([session_document([chunks[r] for r in rs.tolist()]) for rs in rows])


def _means(groups: list[np.ndarray], vec_full: np.ndarray, dim: int) -> np.ndarray:
    """The unit mean of each group's vectors (`mean` aggregation), float32 (groups, dim)."""
    means = np.zeros((len(groups), dim), dtype=np.float32)
    for i, g in enumerate(groups):
        m = vec_full[g].astype(np.float64).sum(axis=0)
        norm = float(np.linalg.norm(m))
        if norm > 0:
            means[i] = m / norm
    return means


def _top2(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per group, the mean of its two best values (its only value when it has one)."""
    ends = np.append(starts[1:], len(values))
    out = np.empty(len(starts))
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        group = np.sort(values[a:b])[::-1][:2]
        group = group[np.isfinite(group)]
        out[i] = group.mean() if len(group) else -np.inf
    return out
