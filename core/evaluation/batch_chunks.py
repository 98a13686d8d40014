"""The chunks a batch of pools re-ranks, by user, and MMR's redundancy between them
(`core.evaluation.batch`): cosines and tag Jaccards do not depend on the config, so they are
worked out once per batch, as tables of every pair for the users where that pays, and as
vectors and tag ids for the others, read at each pick with the same sums as `mmr.select`'s.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.evaluation import shared_rows
from core.evaluation.shared_rows import SharedRows
from core.rank import mmr
from core.recall.pool import ChunkRows, RecallPool, UnitRows
from core.recall.user_index import LazyChunks

TABLE_BYTES = 256 * 2 ** 20
"""Memory for the tables of every pair's cosine and tag Jaccard (16·m² bytes for a user with m
distinct chunks in the pools). A user gets tables when they cost less than the rows of about
`PICKS` picks per question (m² ≤ PICKS · the rows of the user's pools: many questions on one
user, as in LoCoMo), those with the most pool rows per byte first. The others' redundancies
are computed at each pick, for every question at once, with the same sums as `mmr.select`'s
(`mmr.group_dots`)."""
PICKS = 16
SHARE_BYTES = 16 * 2 ** 20
"""A user whose unit vectors over the pools take this much (float64) has them made once in shared
memory for every worker's shard (`SharedVectors`) instead of a copy in each: about 5,500 chunks
of 384 dimensions. Tables of every pair are then far past `TABLE_BYTES` (16·m² bytes), so MMR
reads these vectors."""
UNIT_BLOCK = 8192
"""Rows made unit at a time when filling a shared matrix (a bound on the float64 copy beside it)."""


class UserChunks:
    """One user's distinct chunks over the pools (by memory id): vectors, dims, tags, and
    the tables of every pair's cosine and Jaccard when `TABLE_BYTES` has room for them."""

    def __init__(self, width: int) -> None:
        self.index: dict[str, int] = {}
        self._vectors = np.zeros((16, width))
        self.size = 0
        self.dims: list[int] = []
        self.tags: list[frozenset] = []
        self.numbers: list[int] = []  # session numbers
        self.shared: SharedRows | None = None  # the vectors, when they are in shared memory

    @classmethod
    def of_rows(cls, pools: Sequence[RecallPool],
                shared: "SharedVectors | None" = None) -> "tuple[UserChunks, list[np.ndarray]] | None":
        """The user of `pools` and each pool's local index, made at once when every pool reads
        its chunks and vectors as the same rows of one chunk list and one matrix (`ChunkRows`,
        `UnitRows`: the engine's pools and their cuts): a distinct row is then a distinct chunk,
        with one vector and one tag set, and each is read once. None otherwise: `add` looks at
        each chunk. (At 100,000 chunks, 40 pools 384 deep took 8.5 s chunk by chunk.) With `shared`
        holding this user's matrix, the distinct rows are those of all its pools, the vectors
        that shared matrix."""
        views = []
        for p in pools:
            if not (isinstance(p.chunks, ChunkRows) and isinstance(p.vectors, UnitRows)):
                return None
            views.append((p.chunks, p.vectors))
        chunks, vectors = views[0]
        if not all(c.user_chunks is chunks.user_chunks and v.matrix is vectors.matrix and np.array_equal(c.rows, v.rows)
                   for c, v in views):
            return None
        rows = [c.rows for c, _ in views]
        user = cls(vectors.shape[1])
        found = shared.rows_of(vectors.matrix) if shared is not None else None
        if found is not None:
            distinct, user.shared = found
            user._vectors = user.shared.array
        else:
            distinct = np.unique(np.concatenate(rows))
            user._vectors = np.asarray(UnitRows(vectors.matrix, distinct))  # as `pool.vectors[i]` reads each row
        user.size = len(distinct)
        locs = [np.searchsorted(distinct, r) for r in rows]
        dims = np.zeros(len(distinct), dtype=np.int64)
        for p, loc in zip(pools, locs):
            dims[loc] = p.static.dims
        user.dims = dims.tolist()
        every = chunks.user_chunks
        if isinstance(every, LazyChunks):
            every.decode(distinct.tolist())  # in one parse, not a parse per chunk
        read = [every[r] for r in distinct.tolist()]
        user.tags = [frozenset(c.tags) for c in read]
        user.numbers = [c.session_number for c in read]
        return user, locs

    def add(self, pool: RecallPool) -> np.ndarray:
        """The local index of every row of `pool` (new chunks added; a known id whose vector,
        tags or session number differ here gets an entry of its own)."""
        loc = np.empty(pool.size, dtype=np.int64)
        known = np.zeros(pool.size, dtype=bool)
        for i, c in enumerate(pool.chunks):
            j = self.index.get(c.memory_id)
            known[i] = j is not None and frozenset(c.tags) == self.tags[j] and c.session_number == self.numbers[j]
            loc[i] = j if j is not None and known[i] else self._append(pool, i, c.memory_id)
        rows = np.flatnonzero(known)
        differ = rows[~(self._vectors[loc[rows]] == pool.vectors[rows]).all(axis=1)]
        for i in differ.tolist():
            loc[i] = self._append(pool, i, None)
        return loc

    def _append(self, pool: RecallPool, i: int, memory_id: str | None) -> int:
        j = self.size
        if j == len(self._vectors):
            self._vectors = np.concatenate([self._vectors, np.zeros_like(self._vectors)])
        if memory_id is not None:
            self.index[memory_id] = j
        self._vectors[j] = pool.vectors[i]
        self.size += 1
        self.dims.append(int(pool.static.dims[i]))
        chunk = pool.chunks[i]
        self.tags.append(frozenset(chunk.tags))
        self.numbers.append(chunk.session_number)
        return j

    @property
    def vectors(self) -> np.ndarray:
        """The unit vector of each distinct chunk (m, width)."""
        return self._vectors[: self.size]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tags = mmr.tag_matrix([tuple(sorted(t)) for t in self.tags])
        return self.vectors, np.array(self.dims, dtype=np.int64), tags

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(cosine, Jaccard) of every pair, as `mmr.redundancy_to` computes each: (m, m) each."""
        unit, dims, tags = self.arrays()
        m = len(unit)
        cos = np.empty((m, m))
        for a in range(m):
            cos[a] = mmr.row_dots(unit, unit[a])
        cos = np.clip(cos, 0.0, 1.0)
        cos = np.where((dims[None, :] == dims[:, None]) & (dims[None, :] > 0), cos, 0.0)
        inter = tags @ tags.T  # counts of shared tags: whole numbers, exact in any order
        counts = tags.sum(axis=1)
        union = counts[:, None] + counts[None, :] - inter
        jac = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        return cos, jac


class SharedVectors:
    """The unit vectors of the large users of a question set's pools (`SHARE_BYTES`), each made
    once in shared memory (`core.evaluation.shared_rows`) over the rows any of the pools reads,
    so that the shards of any subsets of these pools (`PoolBatch(..., shared=)`) name one matrix
    per user, which their worker processes map instead of each receiving a copy."""

    def __init__(self, pools: Sequence[RecallPool], share_bytes: int | None = None) -> None:
        """`share_bytes`: the size from which a user's vectors are shared (`SHARE_BYTES`)."""
        share_bytes = SHARE_BYTES if share_bytes is None else share_bytes
        reads: dict[int, tuple[np.ndarray, list[np.ndarray]]] = {}
        for p in pools:
            if isinstance(p.chunks, ChunkRows) and isinstance(p.vectors, UnitRows):
                reads.setdefault(id(p.vectors.matrix), (p.vectors.matrix, []))[1].append(p.vectors.rows)
        self._rows = {}
        for key, (matrix, parts) in reads.items():
            rows = np.unique(np.concatenate(parts))
            if len(rows) * matrix.shape[1] * 8 >= share_bytes:
                self._rows[key] = (matrix, rows)
        self._made: dict[int, SharedRows | None] = {}

    def rows_of(self, matrix: np.ndarray) -> tuple[np.ndarray, SharedRows] | None:
        """(every row of `matrix` the pools read, their unit vectors in shared memory), made on
        first use; None for a matrix not shared (small, or no shared memory to be had)."""
        found = self._rows.get(id(matrix))
        if found is None or found[0] is not matrix:
            return None
        if id(matrix) not in self._made:
            self._made[id(matrix)] = _unit_rows(matrix, found[1])
        made = self._made[id(matrix)]
        return None if made is None else (found[1], made)

    @property
    def made(self) -> list[SharedRows]:
        """The shared matrices made so far (what a worker must receive before its shard)."""
        return [m for m in self._made.values() if m is not None]

    def close(self) -> None:
        """Let go of the descriptors (once every worker has been sent them)."""
        for m in self.made:
            m.close()


def _unit_rows(matrix: np.ndarray, rows: np.ndarray) -> SharedRows | None:
    """`UnitRows(matrix, rows)` as a shared matrix, block by block (each row's values are its
    own: the same in any block), or None when shared memory cannot be had."""
    out = shared_rows.make((len(rows), matrix.shape[1]))
    if out is not None:
        for a in range(0, len(rows), UNIT_BLOCK):
            out.array[a:a + UNIT_BLOCK] = np.asarray(UnitRows(matrix, rows[a:a + UNIT_BLOCK]))
    return out


def users_of(pools: Sequence[RecallPool],
             shared: SharedVectors | None = None) -> tuple[list[UserChunks], list[np.ndarray], list[int]]:
    """The distinct chunks of each user (by id and vector width) over the pools, each pool's
    rows as chunks of its user (local indices), and each pool's user."""
    groups: dict[tuple[str, int], list[int]] = {}  # the pools of each user, by vector width
    for q, p in enumerate(pools):
        groups.setdefault((p.user_id, p.vectors.shape[1]), []).append(q)
    users: list[UserChunks] = []
    locs: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(pools)
    owner = [0] * len(pools)
    for (_, width), members in groups.items():
        made = UserChunks.of_rows([pools[q] for q in members], shared)
        if made is None:
            user = UserChunks(width)
            made = user, [user.add(pools[q]) for q in members]
        for q, loc in zip(members, made[1]):
            locs[q], owner[q] = loc, len(users)
        users.append(made[0])
    return users, locs, owner


class ChunkPairs:
    """MMR's redundancy between any two chunks of a user: from the tables of every pair for the
    users that get them (`TABLE_BYTES`), else from each user's vectors and tag ids. A user whose
    vectors are shared reads them: tables would be a copy in every worker again."""

    def __init__(self, users: Sequence[UserChunks], owner: Sequence[int], pool_sizes: Sequence[int],
                 table_bytes: int = TABLE_BYTES, picks: int = PICKS) -> None:
        """`owner`, `pool_sizes`: each pool's user and rows."""
        sizes = [u.size for u in users]
        rows = np.bincount(np.array(owner, dtype=np.int64), weights=pool_sizes, minlength=len(sizes))
        small, spent = [False] * len(sizes), 0
        for u in sorted(range(len(sizes)), key=lambda u: -rows[u] / max(sizes[u], 1) ** 2):
            table = 16 * sizes[u] ** 2
            if users[u].shared is None and sizes[u] ** 2 <= picks * rows[u] and spent + table <= table_bytes:
                small[u], spent = True, spent + table
        tables = [u.tables() if ok else (np.zeros((0, 0)), np.zeros((0, 0))) for u, ok in zip(users, small)]
        self._base = np.concatenate(([0], np.cumsum([m * m if ok else 0 for m, ok in zip(sizes, small)])))[:-1]
        self._cos = np.concatenate([c.ravel() for c, _ in tables] or [np.zeros(0)])
        self._jac = np.concatenate([j.ravel() for _, j in tables] or [np.zeros(0)])
        self._size = np.array(sizes, dtype=np.int64)
        self.tabled = np.array(small, dtype=bool)
        self._stores, self._store_of, self._base_of = _stores(users, small)

    def between(self, user: np.ndarray, loc: np.ndarray, pick: np.ndarray, tag_weight: float) -> np.ndarray:
        """`redundancy(row, pick)` for every row of each question: `user` (Q,) its user, `loc`
        (Q, M) its rows as chunks of that user, `pick` (Q,) a position among them."""
        out = np.zeros(loc.shape)
        tabled = self.tabled[user]
        if tabled.any():
            t = np.flatnonzero(tabled)
            m = self._size[user[t]][:, None]
            idx = self._base[user[t]][:, None] + loc[t, pick[t]][:, None] * m + loc[t]
            out[t] = np.maximum(self._cos[idx], tag_weight * self._jac[idx])
        for store, stored, dims, tags in self._stores:  # users without tables, by vector width
            rest = np.flatnonzero(~tabled & (self._store_of[user] == store))
            if not len(rest):
                continue
            units = stored.array if isinstance(stored, SharedRows) else stored
            rows = self._base_of[user[rest]][:, None] + loc[rest]
            picked = rows[np.arange(len(rest)), pick[rest]]
            dots = np.clip(mmr.group_dots(units[rows], units[picked]), 0.0, 1.0)
            cos = np.where((dims[rows] == dims[picked][:, None]) & (dims[rows] > 0), dots, 0.0)
            mine, theirs = tags[rows], tags[picked]  # tag ids, -1 = none
            inter = ((mine[:, :, :, None] == theirs[:, None, None, :]) & (mine[:, :, :, None] >= 0)).sum(axis=(2, 3))
            union = (mine >= 0).sum(axis=2) + (theirs >= 0).sum(axis=1)[:, None] - inter
            jac = np.divide(inter, union, out=np.zeros(inter.shape), where=union > 0)
            out[rest] = np.maximum(cos, tag_weight * jac)
        return out


def _stores(users: Sequence[UserChunks], tabled: Sequence[bool]):
    """The chunks of the users without tables, one store per vector width, and one for each user
    whose vectors are shared (they stay where they are): (store, unit vectors, dims, tag ids
    padded with -1), and each user's store and first row in it (-1: tabled)."""
    vocab: dict = {}
    groups: dict[int | tuple[str, int], list[int]] = {}
    for u, user in enumerate(users):
        if not tabled[u]:
            groups.setdefault(user.vectors.shape[1] if user.shared is None else ("shared", u), []).append(u)
    store_of = np.full(len(users), -1, dtype=np.int64)
    base_of = np.zeros(len(users), dtype=np.int64)
    stores = []
    for store, members in enumerate(groups.values()):
        sets = [sorted(vocab.setdefault(t, len(vocab)) for t in tags) for u in members for tags in users[u].tags]
        ids = np.full((len(sets), max([len(t) for t in sets] + [1])), -1, dtype=np.int64)
        for i, t in enumerate(sets):
            ids[i, : len(t)] = t
        first = users[members[0]]
        units: np.ndarray | SharedRows = np.concatenate([users[u].vectors for u in members]) if len(members) > 1 \
            else first.vectors if first.shared is None else first.shared
        dims = np.concatenate([np.array(users[u].dims, dtype=np.int64) for u in members])
        starts = np.cumsum([0] + [users[u].size for u in members])[:-1]
        store_of[members], base_of[members] = store, starts
        stores.append((store, units, dims, ids))
    return stores, store_of, base_of
