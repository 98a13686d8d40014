"""Seeded synthetic recall pools: for benchmarks, property tests and GUI tests without a model."""
from __future__ import annotations

import numpy as np

from core.config import MAX_ROUTE_DEPTH
from core.recall.pool import RecallPool, neighbors_of
from core.records import ROUTES, Chunk

TOPICS = ("family", "pets", "travel", "music", "art", "work", "health", "food", "sports", "books")


def synthetic_pool(n_sessions: int = 8, turns_per_session: int = 6, dim: int = 16, seed: int = 0,
                   route_hit_rate: float = 0.6, user_id: str = "synth", query: str = "synthetic query") -> RecallPool:
    """A pool of session and turn chunks with random route ranks, vectors and tags.

    Each route ranks a random subset of chunks; vectors cluster by session so MMR has
    near-duplicates to find.
    """
    rng = np.random.default_rng(seed)
    chunks: list[Chunk] = []
    centers = rng.normal(size=(n_sessions, dim))
    vecs = []
    for s in range(1, n_sessions + 1):
        sid = f"{user_id}:S{s:03d}"
        tags = tuple(sorted(rng.choice(TOPICS, size=rng.integers(0, 4), replace=False).tolist()))
        time = f"2023-{1 + (s - 1) % 12:02d}-{1 + s % 27:02d}T10:00:00"
        chunks.append(Chunk(f"{sid}:P0", user_id, sid, s, "session", 0, time, f"session {s} user", f"session {s} asst",
                            tags=tags, task_tag=f"session {s}", memory_score=float(rng.choice([0.5, 0.35, 0.65]))))
        vecs.append(centers[s - 1] + 0.1 * rng.normal(size=dim))
        for t in range(turns_per_session):
            nxt = f"turn {t + 1} of {s}" if t + 1 < turns_per_session else ""
            chunks.append(Chunk(f"{sid}:T{t:03d}", user_id, sid, s, "turn", t, time, f"turn {t} of {s}",
                                f"reply {t} of {s}", next_user_text=nxt, tags=tags, task_tag=f"session {s}"))
            vecs.append(centers[s - 1] + 0.5 * rng.normal(size=dim))
    order = np.argsort([c.memory_id for c in chunks], kind="stable")
    chunks = [chunks[i] for i in order]
    vectors = np.array([vecs[i] for i in order])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    n = len(chunks)
    ranks = np.zeros((n, len(ROUTES)), dtype=np.int32)
    scores = np.full((n, len(ROUTES)), np.nan)
    for j in range(len(ROUTES)):
        hit = np.flatnonzero(rng.random(n) < route_hit_rate)
        raw = np.sort(rng.random(len(hit)))[::-1]
        perm = rng.permutation(hit)
        # ties broken by id: equal scores never occur with continuous draws
        ranks[perm, j] = np.arange(1, len(perm) + 1)
        scores[perm, j] = raw
    return RecallPool(query, user_id, tuple(chunks), ranks, scores, vectors, depth=MAX_ROUTE_DEPTH,
                      neighbors=neighbors_of(chunks), user_chunks={c.memory_id: c for c in chunks})
