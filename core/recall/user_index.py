"""One user's index for recall: per-chunk columns, BM25 and session structure (SPEC §2, §4).

Recall needs of every chunk only a few fields (its session, kind, memory score, neighbours)
and the BM25 index over its text; the chunk itself is read only for the few hundred rows a
pool holds. `UserColumns` is that part as arrays. The embedded store writes it beside the
user's vectors at ingest (`save`), so opening a user of 30,000 chunks reads arrays instead
of decoding and tokenising every chunk; `LazyChunks` decodes a chunk when it is first used.
A store without the file (older, or a server) builds the same columns from the chunks.
"""
from __future__ import annotations

import os
import threading
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence, TypeVar

import numpy as np

from core.recall.lexical.fulltext import FullTextIndex
from core.recall.lexical.analyzer import PLAIN, AnalyzedIndex, analyzer
from core.recall.lexical.bm25 import LexicalIndex
from core.recall.pool import PoolArrays, neighbors_of
from core.recall.sessions import DEFAULT_AGGREGATION, DEFAULT_SESSION_ANALYZER, SessionIndex, session_lexicons
from core.records import DENSE_ROUTES, Chunk, clamp01

COLUMNS_FORMAT = 2
"""Format 2 adds the rows' memory ids and route masks (a user opens without reading its rows from
SQLite) and the session documents' BM25 indexes (`core.recall.sessions.session_lexicons`);
format 1 files are read as before, those parts then come from the rows."""
READS_COLUMNS = (1, 2)
ID_SEP = "\x00"
LEXICAL_MODES: dict[str, Callable[[list[str]], LexicalIndex | FullTextIndex]] = {
    "bm25": LexicalIndex, "memsense": FullTextIndex}
"""The lexical route of an embedded store: BM25 (SPEC §2), or Memsense's PostgreSQL-style English
full text with AND semantics and cover-density ranking (SPEC §10, core.recall.lexical.fulltext)."""


def ids_checksum(memory_ids: Sequence[str]) -> int:
    """Adler-32 of the memory ids in row order: ties a columns file to the rows it was made for."""
    return zlib.adler32(_id_blob(memory_ids))


def _id_blob(memory_ids: Sequence[str]) -> bytes:
    return ID_SEP.join(memory_ids).encode("utf-8", "surrogatepass")


def session_groups(session_of: np.ndarray, is_session: np.ndarray) -> list[np.ndarray]:
    """Session code -> the rows of its session chunks, ascending."""
    rows = np.flatnonzero(is_session)
    order = rows[np.argsort(session_of[rows], kind="stable")]
    sessions = int(session_of.max(initial=-1)) + 1
    bounds = np.searchsorted(session_of[order], np.arange(sessions + 1)).tolist()
    return [order[bounds[i]:bounds[i + 1]] for i in range(sessions)]


@dataclass(frozen=True)
class UserColumns:
    """What recall needs of each chunk of one user, in row (memory_id) order, plus its BM25 index."""

    ids_crc: int  # `ids_checksum` of the rows
    session_of: np.ndarray  # int64 session code, codes in first-seen order
    is_session: np.ndarray  # bool
    is_turn: np.ndarray  # bool
    memory_score: np.ndarray  # float64, clamp01(memory_score)
    previous: np.ndarray  # int64 row of the neighbour before (same session and kind, §4), -1 = none
    following: np.ndarray  # int64 row of the neighbour after, -1 = none
    bm25: LexicalIndex
    memory_ids: list[str] | None = None  # the rows' memory ids (format 2; None: read them from the rows)
    routes: np.ndarray | None = None  # uint8 route mask of each row, bit j = a vector on DENSE_ROUTES[j] (format 2)
    sessions: Mapping[str, LexicalIndex] = field(default_factory=dict)  # analyzer -> session documents' BM25

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk], routes: np.ndarray | None = None, sessions: bool = False) -> "UserColumns":
        """The columns of `chunks` (row order); `routes`: their route masks, kept when given;
        `sessions`: with the session documents' BM25 indexes (what a store saves)."""
        codes: dict[str, int] = {}
        row_of = {c.memory_id: i for i, c in enumerate(chunks)}
        around = neighbors_of(chunks)

        def rows(k: int) -> np.ndarray:
            return np.array([-1 if (m := around[c.memory_id][k]) is None else row_of[m] for c in chunks], dtype=np.int64)

        ids = [c.memory_id for c in chunks]
        session_of = np.array([codes.setdefault(c.session_id, len(codes)) for c in chunks], dtype=np.int64)
        is_session = np.array([c.kind == "session" for c in chunks], dtype=bool)
        return cls(
            ids_crc=ids_checksum(ids), session_of=session_of, is_session=is_session,
            is_turn=np.array([c.kind == "turn" for c in chunks], dtype=bool),
            memory_score=np.array([clamp01(c.memory_score) for c in chunks], dtype=np.float64),
            previous=rows(0), following=rows(1),
            bm25=LexicalIndex([c.lexical_text for c in chunks]),
            memory_ids=ids, routes=None if routes is None else np.asarray(routes, dtype=np.uint8),
            sessions=session_lexicons(chunks, session_groups(session_of, is_session)) if sessions else {},
        )

    def save(self, path: Path) -> None:
        """Write to `path` (an uncompressed .npz, flushed to disk before it returns)."""
        arrays: dict[str, Any] = {"format": np.array([COLUMNS_FORMAT, self.ids_crc], dtype=np.int64), "session_of": self.session_of,
                  "is_session": self.is_session, "is_turn": self.is_turn, "memory_score": self.memory_score,
                  "previous": self.previous, "following": self.following,
                  **{f"bm25_{k}": v for k, v in self.bm25.arrays().items()},
                  **{f"sessions_{name}_{k}": v for name, index in self.sessions.items() for k, v in index.arrays().items()}}
        if self.memory_ids is not None and not any(ID_SEP in m for m in self.memory_ids):
            arrays["memory_ids"] = np.frombuffer(_id_blob(self.memory_ids), dtype=np.uint8)
        if self.routes is not None:
            arrays["routes"] = self.routes
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())

    @classmethod
    def load(cls, path: Path, n: int) -> "UserColumns":
        """The columns saved at `path` for `n` rows. ValueError (or OSError) when the file is
        damaged or not for `n` rows: every member's zip CRC is checked as it is read."""
        try:
            with np.load(path, allow_pickle=False) as z:
                a = {k: z[k] for k in z.files}
        except (zipfile.BadZipFile, KeyError, EOFError) as exc:
            raise ValueError(f"{path.name} cannot be read: {exc}") from None
        try:
            fmt, crc = (int(v) for v in a["format"])
            if fmt not in READS_COLUMNS:
                raise ValueError(f"{path.name} has columns format {fmt}, this memsense reads {READS_COLUMNS}")
            columns = cls(crc, a["session_of"].astype(np.int64), a["is_session"].astype(bool), a["is_turn"].astype(bool),
                          a["memory_score"].astype(np.float64), a["previous"].astype(np.int64),
                          a["following"].astype(np.int64), _lexicon(a, "bm25_"), _saved_ids(a),
                          a["routes"].astype(np.uint8) if "routes" in a else None, _SavedLexicons(a))
        except KeyError as exc:
            raise ValueError(f"{path.name} lacks {exc}") from None
        per_row = (columns.session_of, columns.is_session, columns.is_turn, columns.memory_score,
                   columns.previous, columns.following)
        if (any(len(v) != n for v in per_row) or columns.bm25.size != n
                or any(v is not None and len(v) != n for v in (columns.routes, columns.memory_ids))):
            raise ValueError(f"{path.name} is not for {n} chunks")
        if columns.memory_ids is not None and ids_checksum(columns.memory_ids) != crc:
            raise ValueError(f"{path.name} holds memory ids that are not those of its rows")
        if n and (columns.previous.max() >= n or columns.following.max() >= n or columns.previous.min() < -1
                  or columns.following.min() < -1 or columns.session_of.min() < 0):
            raise ValueError(f"{path.name} holds rows out of range")
        return columns


def _lexicon(a: Mapping[str, np.ndarray], prefix: str) -> LexicalIndex:
    return LexicalIndex.from_arrays({k[len(prefix):]: v for k, v in a.items() if k.startswith(prefix)})


def _saved_ids(a: Mapping[str, np.ndarray]) -> list[str] | None:
    """The memory ids a format 2 file keeps (`load` checks them against the rows' checksum)."""
    if "memory_ids" not in a:
        return None
    blob = a["memory_ids"].astype(np.uint8).tobytes()
    return blob.decode("utf-8", "surrogatepass").split(ID_SEP) if blob else []


class _SavedLexicons(Mapping[str, LexicalIndex]):
    """analyzer -> the session documents' BM25 index, each made from its saved arrays when first asked."""

    def __init__(self, a: Mapping[str, np.ndarray]):
        self._arrays = {k: v for k, v in a.items() if k.startswith("sessions_")}
        self._names = sorted({k.split("_")[1] for k in self._arrays})
        self._made: dict[str, LexicalIndex] = {}

    def __getitem__(self, name: str) -> LexicalIndex:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._made:
            try:
                self._made[name] = _lexicon(self._arrays, f"sessions_{name}_")
            except ValueError:  # arrays that do not fit: the session index is then made from the chunks
                raise KeyError(name) from None
        return self._made[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _has_vec_full(columns: UserColumns, vec_full: np.ndarray) -> np.ndarray:
    """Which rows have a vec_full vector: from the saved route masks (no read of every vector) or the vectors."""
    if columns.routes is None:
        return np.asarray(vec_full.any(axis=1))
    return np.asarray((columns.routes >> DENSE_ROUTES.index("vec_full")) & 1 == 1)


class LazyChunks(Sequence[Chunk]):
    """A user's chunks in row order, each decoded from its stored payload when first used.

    `decode(payloads, rows)` turns payloads into their chunks (and raises on a damaged one);
    iterating decodes every chunk not yet decoded in one call. `payloads` may be a
    `PayloadSource` that a store reads meanwhile."""

    def __init__(self, memory_ids: list[str], payloads: list[str] | PayloadSource,
                 decode: Callable[[list[str], list[int]], list[Chunk]],
                 check: Callable[[list[str], list[int]], None] | None = None):
        self.memory_ids = memory_ids
        self._source = None if isinstance(payloads, list) else payloads
        self._payloads: list[str | None] = list(payloads) if isinstance(payloads, list) else []
        self._chunks: list[Chunk | None] = [None] * len(memory_ids)
        self._seen = np.zeros(len(memory_ids), dtype=bool)  # row decoded or checked
        self._decode = decode
        self._check = check
        self._lock = threading.Lock()  # the engine thread and the UI thread may both read chunks

    def __len__(self) -> int:
        return len(self._chunks)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        chunk = self._chunks[i]
        if chunk is None:
            self._fill([range(len(self))[i]])
            chunk = self._chunks[i]
        return chunk

    def decode(self, rows: Iterable[int]) -> None:
        """Decode these rows now."""
        self._fill([int(r) for r in rows])

    def check(self, rows: np.ndarray) -> None:
        """Check these rows now (a pool's rows, on the thread that recalls: a damaged payload is
        then an error of the recall, not of a later re-rank) with the `check` given (every
        payload parses and holds its row's memory_id; it raises on damage), or else decode them.
        A row once checked or decoded is not checked again; a checked row is decoded when used:
        a re-rank reads a few dozen of a pool's hundreds."""
        rows = np.asarray(rows, dtype=np.int64)
        fresh = rows[~self._seen[rows]]
        if not len(fresh):
            return
        if self._check is None:
            self._fill(fresh.tolist())
            return
        with self._lock:
            todo = [r for r in fresh.tolist() if self._chunks[r] is None]
            texts = self._texts(todo)
        self._check(texts, todo)
        self._seen[fresh] = True

    def _texts(self, rows: list[int]) -> list[str]:
        """The payloads of `rows` (under `_lock`): all of them once the source has read them all."""
        source = self._source
        if source is not None and (source.done() or len(rows) == len(self)):
            self._payloads = [None if c is not None else p for p, c in zip(source.every(), self._chunks)]
            self._source = source = None
        if source is None:
            return [self._payloads[r] for r in rows]  # type: ignore[misc]  # rows not decoded hold theirs
        wanted = sorted(set(rows))
        got = dict(zip(wanted, source.rows(wanted)))
        return [got[r] for r in rows]

    def _fill(self, rows: list[int]) -> None:
        with self._lock:
            rows = list(dict.fromkeys(r for r in rows if self._chunks[r] is None))
            if rows:
                for r, chunk in zip(rows, self._decode(self._texts(rows), rows)):
                    self._chunks[r] = chunk
                    if self._source is None:
                        self._payloads[r] = None
                self._seen[rows] = True

    def __reduce__(self):
        return list, (list(self),)  # a copy elsewhere (another process) holds every chunk decoded

    def __iter__(self) -> Iterator[Chunk]:
        missing = [r for r, c in enumerate(self._chunks) if c is None]
        if missing:
            self._fill(missing)
        return iter(self._chunks)  # type: ignore[arg-type]


class PayloadSource(Protocol):
    """A user's payloads that a store is reading (`core.recall.embedded.payloads.PayloadReader`)."""

    def done(self) -> bool:
        """Whether all of them have been read."""

    def every(self) -> list[str]:
        """All of them, in row order (waits for the read)."""

    def rows(self, rows: list[int]) -> list[str]:
        """Those of `rows` (ascending, distinct)."""


V = TypeVar("V")
_SESSIONS_LOCK = threading.Lock()
"""Held while a user's session index is built (a pool sent to another process pickles its user index: no lock in it)."""


class _ByRow(Mapping[str, V]):
    """A mapping keyed by memory_id whose values are read from row `self._row[memory_id]` on lookup."""

    _row: dict[str, int]

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._row

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)


class ChunksById(_ByRow[Chunk]):
    """memory_id -> chunk over a row-ordered chunk list, decoding only what is looked up."""

    def __init__(self, chunks: Sequence[Chunk], memory_ids: Sequence[str], row_of: dict[str, int] | None = None):
        self._chunks = chunks
        self._row = dict(zip(memory_ids, range(len(memory_ids)))) if row_of is None else row_of

    def __getitem__(self, memory_id: str) -> Chunk:
        return self._chunks[self._row[memory_id]]


class RowNeighbors(_ByRow[tuple[str | None, str | None]]):
    """memory_id -> (previous, next) memory_id (§4), read from the columns' row arrays when
    looked up: no tuple per chunk is made for a user whose pools read a few hundred."""

    def __init__(self, memory_ids: Sequence[str], previous: np.ndarray, following: np.ndarray, row_of: dict[str, int]):
        self._ids, self._previous, self._following, self._row = memory_ids, previous, following, row_of

    def __getitem__(self, memory_id: str) -> tuple[str | None, str | None]:
        r = self._row[memory_id]
        p, f = int(self._previous[r]), int(self._following[r])
        return (self._ids[p] if p >= 0 else None, self._ids[f] if f >= 0 else None)


@dataclass
class UserIndex:
    chunks: Sequence[Chunk]
    vec_full: np.ndarray  # unit rows (float32), zero rows where missing
    lexical: LexicalIndex | FullTextIndex | AnalyzedIndex
    session_of: np.ndarray  # row -> session code
    session_rows: list[np.ndarray]  # session code -> rows of its session chunks
    is_session: np.ndarray  # row -> is a session chunk
    neighbors: Mapping[str, tuple[str | None, str | None]]
    by_id: Mapping[str, Chunk]
    static: PoolArrays  # `RecallPool.static` of every row: a pool takes its rows' entries
    is_turn: np.ndarray | None = None  # row -> is a turn chunk
    saved_sessions: Mapping[str, LexicalIndex] = field(default_factory=dict)  # `UserColumns.sessions`
    _sessions: dict[tuple[str, str], SessionIndex] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, chunks: Sequence[Chunk], vec_full: np.ndarray, lexical: str = "bm25",
              columns: UserColumns | None = None, memory_ids: Sequence[str] | None = None,
              analyzer_name: str = PLAIN) -> "UserIndex":
        """The index of `chunks` (row order); `columns` saved for them spare decoding and tokenising
        every chunk (the BM25 index is theirs when `lexical` is "bm25", read by `analyzer_name`)."""
        ids = list(memory_ids) if memory_ids is not None else [c.memory_id for c in chunks]
        if columns is None:
            columns = UserColumns.from_chunks(chunks)
        text_index: LexicalIndex | FullTextIndex | AnalyzedIndex
        if lexical != "bm25":
            text_index = LEXICAL_MODES[lexical]([c.lexical_text for c in chunks])
        elif analyzer_name == PLAIN:
            text_index = columns.bm25
        else:
            text_index = AnalyzedIndex(columns.bm25, analyzer(analyzer_name))
        session_of, is_session = columns.session_of, columns.is_session
        static = PoolArrays(
            is_turn=columns.is_turn,
            session_of=session_of,
            memory_score=columns.memory_score,
            dims=np.where(_has_vec_full(columns, vec_full), vec_full.shape[1], 0) if len(ids) else np.zeros(0, np.int64),
        )
        row_of = dict(zip(ids, range(len(ids))))  # a memory_id shared by rows: the last, as a dict of them gives
        return cls(chunks, vec_full, text_index, session_of, session_groups(session_of, is_session),
                   is_session, RowNeighbors(ids, columns.previous, columns.following, row_of),
                   ChunksById(chunks, ids, row_of), static, columns.is_turn, columns.sessions)

    def sessions(self, analyzer_name: str = DEFAULT_SESSION_ANALYZER,
                 aggregation: str = DEFAULT_AGGREGATION) -> SessionIndex:
        """The session routes' index (`core.recall.sessions`), built on first use from the saved
        session BM25 indexes, or else from the session chunks (only those are decoded), and kept."""
        key = (analyzer_name, aggregation)
        with _SESSIONS_LOCK:
            index = self._sessions.get(key)
            if index is None:
                is_turn = self.is_turn if self.is_turn is not None else self.static.is_turn
                index = self._sessions[key] = SessionIndex.build(
                    self.chunks, self.session_rows, self.session_of, is_turn, self.vec_full,
                    analyzer(analyzer_name), aggregation, self.saved_sessions)
            return index

