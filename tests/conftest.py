from __future__ import annotations

import os
from pathlib import Path


import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

@pytest.fixture(scope="session")
def model_cache(tmp_path_factory) -> Path:
    """One embedding cache for the whole run, so each text is embedded once."""
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory, model_cache) -> Path:
    from core.recall.engine import DEMO_DATASET, build_store

    store = tmp_path_factory.mktemp("demo-store") / "store"
    build_store(DEMO_DATASET, store, cache_dir=model_cache)
    return store


@pytest.fixture(scope="session")
def demo_engine(demo_store, model_cache):
    from core.recall.engine import Engine

    engine = Engine(demo_store, cache_dir=model_cache)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def memsense_pg(tmp_path_factory, model_cache):
    """A real PostgreSQL + pgvector on 127.0.0.1 holding a Memsense schema with the demo data
    (vectors by the bundled all-MiniLM-L6-v2) and a few odd users; stopped at the end."""
    import psycopg

    from core.recall.embedding.embedder import Embedder
    from core.recall.engine import DEMO_DATASET, route_vectors
    from core.ingest import build_chunks, load_conversations
    SCHEMA, LocalPostgres, add_oddities, load_demo = _memsense_db("SCHEMA", "LocalPostgres", "add_oddities", "load_demo")

    server = LocalPostgres()
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE memsense")
        dsn = server.dsn("memsense")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(SCHEMA)
        chunks = build_chunks(load_conversations(DEMO_DATASET), mode="hybrid")
        embedder = Embedder(None, model_cache)
        try:
            vectors = route_vectors(chunks, embedder)
        finally:
            embedder.close()
        ids = load_demo(dsn, chunks, vectors)
        add_oddities(dsn)
        yield type("MemsenseDB", (), {"dsn": dsn, "server": server, "chunks": chunks, "vectors": vectors, "ids": ids})
    finally:
        server.stop()


@pytest.fixture(scope="session")
def embed_endpoint(model_cache):
    """A loopback embedding endpoint serving the bundled model in Memsense's request shapes."""
    import numpy as np

    from core.recall.embedding.embedder import Embedder
    (EmbeddingEndpoint,) = _memsense_db("EmbeddingEndpoint")

    embedder = Embedder(None, model_cache)

    def encode(text):
        v = np.asarray(embedder.encode([text])[0], dtype=np.float64)
        return v / np.linalg.norm(v)

    endpoint = EmbeddingEndpoint(encode)
    yield endpoint
    endpoint.close()
    embedder.close()


def _memsense_db(*names):
    """Names from tests/memsense_db.py."""
    from tests import memsense_db as module

    return tuple(getattr(module, n) for n in names) if names else module


@pytest.fixture(scope="session")
def memsense_db():
    """The helpers of tests/memsense_db.py (local PostgreSQL, embedding endpoint)."""
    return _memsense_db()
