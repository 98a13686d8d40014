"""The engine: build a store from a dataset and recall a query over the eight routes (§2).
Recall runs once per query; `core.rank.rerank` does the rest (`core.search` joins the two).
"""
from __future__ import annotations

import functools
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.config import MAX_ROUTE_DEPTH, Config
from core.errors import Cancelled, MemsenseError
from core.files import packaged_file
from core.recall.backends import open_store
from core.recall.deepen import ScanPools, SessionScores, assemble
from core.recall.lexical.analyzer import PLAIN, analyzer
from core.recall.sessions import AGGREGATIONS, DEFAULT_AGGREGATION, DEFAULT_SESSION_ANALYZER
from core.recall.embedding.embedder import Embedder, TextEmbedder
from core.recall.embedding.model_identity import is_content_key, legacy_model_key
from core.recall.pool import RecallPool
from core.recall.query_text import check_query, for_local_model
from core.recall.store import RouteHits, Store, StoreMeta, is_url
from core.recall.ties import ranked_lists, ranked_scores
from core.recall.user_index import LEXICAL_MODES, UserIndex
from core.records import DENSE_ROUTES, Chunk
from core.redact import redact_url

DEMO_DATASET = packaged_file("demo", "demo-conversations.jsonl")
DEMO_QUESTIONS = packaged_file("demo", "demo-questions.json")
SAME_MODEL_COSINE = 0.999
"""A stored vector re-embedded by the same model agrees to float noise; another model's does not."""

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class IngestStats:
    users: int
    session_chunks: int
    turn_chunks: int
    texts_embedded: int
    texts_from_cache: int
    seconds: float

    def to_dict(self) -> dict:
        return {"users": self.users, "session_chunks": self.session_chunks, "turn_chunks": self.turn_chunks,
                "texts_embedded": self.texts_embedded, "texts_from_cache": self.texts_from_cache,
                "seconds": round(self.seconds, 3)}


def route_vectors(chunks: list[Chunk], embedder: Embedder, progress: Progress | None = None,
                  cancel: threading.Event | None = None) -> dict[str, np.ndarray]:
    """Embed every distinct route text once; rows of zeros where a chunk has no text."""
    texts = sorted({c.route_text(r) for c in chunks for r in DENSE_ROUTES} - {""})
    report = (lambda d, t: progress(d, t, "embedding")) if progress else None
    vecs = embedder.encode(texts, progress=report, cancelled=cancel.is_set if cancel else None)
    index = {t: i for i, t in enumerate(texts)}
    dim = vecs.shape[1] if len(texts) else embedder.dim
    out = {}
    for r in DENSE_ROUTES:
        m = np.zeros((len(chunks), dim), dtype=np.float32)
        for i, c in enumerate(chunks):
            t = c.route_text(r)
            if t:
                m[i] = vecs[index[t]]
        out[r] = m
    return out


def build_store(dataset: str | Path, location: str | Path, *, mode: str = "hybrid", model: str | None = None,
                cache_dir: str | Path | None = None, facet_source: str = "text",
                progress: Progress | None = None, cancel: threading.Event | None = None) -> IngestStats:
    """Ingest a LoCoMo or JSONL dataset into a store (created if needed), user by user.

    Each user is swapped in only when fully written; cancel raises Cancelled
    and leaves the store as it was.
    """
    from core.ingest import build_chunks, load_conversations

    start = time.perf_counter()
    if progress:
        progress(0, 1, "reading dataset")
    conversations = load_conversations(dataset)
    chunks = build_chunks(conversations, mode=mode, facet_source=facet_source)
    if not chunks:
        raise MemsenseError(f"{dataset}: no messages to store")
    embedder = Embedder(model, cache_dir)
    folder = None if is_url(location) else Path(location).expanduser()
    new_folder = folder is not None and not folder.exists()
    try:
        store = open_store(location, create=True)  # locked or unwritable: fail before the slow embedding
        written = False
        try:
            check_writable(store)
            check_model(store, store.meta(), embedder)
            vectors = route_vectors(chunks, embedder, progress, cancel)
            by_user: dict[str, list[int]] = {}
            for i, c in enumerate(chunks):
                by_user.setdefault(c.user_id, []).append(i)
            dim = next(iter(vectors.values())).shape[1]
            users = sorted(by_user)
            for n, user in enumerate(users):
                if progress:
                    progress(n, len(by_user), f"storing {user}")
                rows = by_user[user]
                try:
                    store.write_user(user, [chunks[i] for i in rows], {r: v[rows] for r, v in vectors.items()},
                                     embedder.key, dim, cancelled=cancel.is_set if cancel else None)
                except Cancelled:
                    raise
                except MemsenseError as exc:
                    raise MemsenseError(f"{exc}; {stored_and_not(users[:n], users[n:])}") from None
                written = True
            if progress:
                progress(len(by_user), len(by_user), "done")
        finally:
            store.close()
            if folder is not None and new_folder and not written:  # a failed first ingest leaves no empty store behind
                shutil.rmtree(folder, ignore_errors=True)
        return IngestStats(len(by_user), sum(c.kind == "session" for c in chunks), sum(c.kind == "turn" for c in chunks),
                           embedder.embedded, embedder.cached, time.perf_counter() - start)
    finally:
        embedder.close()


def stored_and_not(stored: list[str], not_stored: list[str], shown: int = 10) -> str:
    """Which users an ingest that stopped part-way stored, and which it did not."""
    def names(users: list[str]) -> str:
        return ", ".join(users[:shown]) + (f" and {len(users) - shown} more" if len(users) > shown else "")

    return (f"stored {len(stored)} of {len(stored) + len(not_stored)} users" + (f" ({names(stored)})" if stored else "")
            + f", not stored: {names(not_stored)}")


def check_writable(store: Store) -> None:
    """A local store folder must be writable before anything is embedded for it."""
    if is_url(store.location):
        return
    folder = Path(store.location).expanduser()
    if not os.access(folder, os.W_OK):
        raise MemsenseError(f"the store {folder} is read-only; make it writable, or ingest into another --store")


class Engine:
    """An open store plus the embedding model; recall for one user at a time (`RecallEngine`)."""

    model_text: str | None = None
    """The stored vectors' models are this engine's own (`model_path`): nothing to name apart."""

    def __init__(self, location: str | Path, *, model: str | None = None, cache_dir: str | Path | None = None,
                 embedder: TextEmbedder | None = None, lexical: str = "bm25", analyzer_name: str = PLAIN,
                 session_routes: bool = True, session_analyzer: str = DEFAULT_SESSION_ANALYZER,
                 session_dense: str = DEFAULT_AGGREGATION):
        if lexical not in LEXICAL_MODES:
            raise MemsenseError(f"unknown lexical mode {lexical!r}; choose {' or '.join(LEXICAL_MODES)}")
        analyzer(analyzer_name), analyzer(session_analyzer)  # unknown names: one error line, before the store opens
        if session_dense not in AGGREGATIONS:
            raise MemsenseError(f"unknown session_dense aggregation {session_dense!r}; choose {', '.join(AGGREGATIONS)}")
        self.lexical = lexical
        self.analyzer_name = analyzer_name
        self.session_routes = session_routes
        """Whether recall ranks the session routes (SPEC §15); off, their lists are empty."""
        self.session_analyzer = session_analyzer
        self.session_dense = session_dense
        # a bad model folder fails before the store is locked; `embedder` stands in for the model (benchmarks)
        self.embedder: TextEmbedder = embedder or Embedder(model, cache_dir)
        try:
            self.store = open_store(location)
        except MemsenseError:
            self.embedder.close()
            raise
        try:
            meta = self.store.meta()
            if meta is None or not meta.users:
                raise MemsenseError(f"the store {redact_url(str(location))} holds no users; ingest a dataset into it first")
            check_model(self.store, meta, self.embedder)
        except BaseException:
            self.close()
            raise
        self.location = str(location)
        self._users: dict[str, UserIndex] = {}
        self._lock = threading.RLock()

    def load_model(self) -> None:
        self.embedder.load()

    @property
    def pools_deepen(self) -> bool:
        """Whether recall pools can deepen (`core.recall.pool.deepen`): a store that scans every
        vector keeps the query's scores; a Qdrant server returns lists, so its pools are fixed."""
        return self.store.scanner is not None

    @property
    def model_path(self) -> str:
        """The folder of the model that embeds queries (and embedded the store)."""
        return str(self.embedder.model_path)

    def users(self) -> list[str]:
        return self.store.users()

    def _index(self, user_id: str) -> UserIndex:
        with self._lock:
            if user_id not in self._users:
                scanner = self.store.scanner
                if scanner is not None:  # the embedded store: saved columns, chunks decoded on use
                    chunks, vec_full, columns = scanner.read_indexed(user_id)
                    self._users[user_id] = UserIndex.build(chunks, vec_full, self.lexical, columns, chunks.memory_ids,
                                                           self.analyzer_name)
                else:
                    self._users[user_id] = UserIndex.build(*self.store.read_user(user_id), self.lexical,
                                                           analyzer_name=self.analyzer_name)
            return self._users[user_id]

    def note(self, user_id: str) -> str:
        """Why the user opened the slow way (no usable columns file, and how to write one), or ""."""
        scanner = self.store.scanner
        return "" if scanner is None else scanner.column_notes.get(user_id, "")

    def chunks(self, user_id: str) -> Sequence[Chunk]:
        return self._index(user_id).chunks

    def embed_queries(self, queries: Sequence[str], progress: Callable[[int, int], None] | None = None,
                      cancelled: Callable[[], bool] | None = None) -> None:
        """Embed many queries in batches, as `recall` embeds each (into the embedding cache, which
        each recall then reads): about twice as fast as one at a time, with progress and cancel.
        A query `recall` would refuse is left for its recall to name."""
        texts = set()
        for query in queries:
            try:
                texts.add(for_local_model(validate_query(query)))
            except MemsenseError:
                continue
        self.embedder.encode(sorted(texts), progress=progress, cancelled=cancelled)

    def recall(self, user_id: str, query: str, depth: int | None = None) -> RecallPool:
        """Every route's ranked list to `depth` (default: what the default settings need), plus
        the session chunks of touched sessions. The pool keeps the query's exact route scores,
        so it deepens with no new search when asked (`core.recall.pool.deepen`); on a Qdrant
        server, which returns lists and not full scans, the pool is fixed at `depth` (default
        the deepest any config needs, `MAX_ROUTE_DEPTH`)."""
        query = validate_query(query)
        ix = self._index(user_id)
        t0 = time.perf_counter()
        qvec = self.embedder.encode([for_local_model(query)])[0]  # cut as Memsense cuts it
        t1 = time.perf_counter()
        scanner = self.store.scanner
        if scanner is None:
            return self._fixed(ix, user_id, query, qvec, MAX_ROUTE_DEPTH if depth is None else depth, (t1 - t0) * 1e3)
        dense = scanner.scan(user_id, qvec)
        t2 = time.perf_counter()
        lex = ix.lexical.scores(query)
        t3 = time.perf_counter()
        sessions = self._sessions(ix, query, qvec, dense[DENSE_ROUTES.index("vec_full")])
        t4 = time.perf_counter()
        timings = {"embed": (t1 - t0) * 1e3, "dense": (t2 - t1) * 1e3, "lexical": (t3 - t2) * 1e3,
                   "sessions": (t4 - t3) * 1e3}
        depth = _default_depth() if depth is None else depth
        return ScanPools(ix, user_id, query, dense, lex, timings, max_depth=max(MAX_ROUTE_DEPTH, depth),
                         sessions=sessions).pool(depth)

    def _sessions(self, ix: UserIndex, query: str, qvec: np.ndarray, cosines: np.ndarray) -> SessionScores | None:
        """Every session's scores on the session routes (None when they are off)."""
        if not self.session_routes:
            return None
        index = ix.sessions(self.session_analyzer, self.session_dense)
        return SessionScores(index, index.lexical_scores(query), index.dense_scores(cosines, qvec))

    def _fixed(self, ix: UserIndex, user_id: str, query: str, qvec: np.ndarray, depth: int, embed_ms: float) -> RecallPool:
        """A pool from the store's route lists `depth` deep (noise-tied cosines ordered by id)."""
        t1 = time.perf_counter()
        lists = ranked_lists(lambda routes, n: self.store.search(user_id, qvec, routes, n), DENSE_ROUTES, depth)
        hits = {r: RouteHits(*h) for r, h in lists.items()}
        t2 = time.perf_counter()
        lex = ix.lexical.scores(query)
        hits["lexical"] = RouteHits(*ranked_scores(lex, depth, positive=True))
        t3 = time.perf_counter()
        timings = {"embed": embed_ms, "dense": (t2 - t1) * 1e3, "lexical": (t3 - t2) * 1e3}
        cosines = np.where(ix.vec_full.any(axis=1), ix.vec_full @ _unit32(qvec), -np.inf)  # as a scan computes them
        sessions = self._sessions(ix, query, qvec, cosines)
        pool = assemble(ix, query, user_id, hits, depth, timings, sessions=sessions.hits(depth) if sessions else None)
        pool.timings_ms["assemble"] = (time.perf_counter() - t3) * 1e3
        return pool

    def recall_for(self, user_id: str, query: str, cfg: Config) -> RecallPool:
        """The pool a search under `cfg` re-ranks: its `route_limit` deep."""
        return self.recall(user_id, query, cfg.route_limit)

    def close(self) -> None:
        self.store.close()
        self.embedder.close()


def check_model(store: Store, meta: StoreMeta | None, embedder: TextEmbedder) -> None:
    """The store's vectors must come from the embedder's model (same weights, any folder).

    Stores record the model's content hash. Stores built before that recorded only a folder
    name and file sizes, which two different models can share; for those the model is checked
    by its output: one stored chunk is embedded again and must give the stored vector.
    """
    if meta is None or not meta.users or meta.model_key == embedder.key:
        return
    where = f"the store {store.location}"
    if is_content_key(meta.model_key) or meta.model_key != legacy_model_key(embedder.model_path):
        raise MemsenseError(f"{where} was built with another embedding model ({meta.model_key}) than "
                            f"{embedder.model_path} ({embedder.key}); pass the --model it was built with, "
                            "or ingest into a new --store")
    chunks, vec_full = store.read_user(sorted(meta.users)[0])
    row = next((i for i in range(len(chunks)) if vec_full[i].any()), None)
    if row is None:
        return
    fresh = embedder.encode([chunks[row].route_text("vec_full")])[0]
    stored = vec_full[row] / np.linalg.norm(vec_full[row])
    if float(fresh @ stored) < SAME_MODEL_COSINE:
        raise MemsenseError(f"{where} was built with a different model that has the same folder name and file "
                            f"sizes as {embedder.model_path}; pass the --model it was built with, or ingest into "
                            "a new --store")


def _unit32(query: np.ndarray) -> np.ndarray:
    """The query as the embedded store's scan takes it: float32, scaled to length 1."""
    q = np.asarray(query, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    return q / norm if norm > 0 else q


@functools.cache
def _default_depth() -> int:
    """The route depth the default settings need (`Config().route_limit`; a Config checks
    every knob as it is made, a cost paid once here instead of on every recall)."""
    return Config().route_limit


def validate_query(query: str) -> str:
    """The query, checked (`core.recall.query_text.check_query`)."""
    return check_query(query)
