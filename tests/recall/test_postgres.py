"""A live Memsense database as a store: recall in PostgreSQL, read-only, one-line errors.

Runs against a real PostgreSQL + pgvector started by the `memsense_pg` fixture on 127.0.0.1.
"""
from __future__ import annotations

import numpy as np
import pytest

from core.errors import MemsenseError
from core.records import DENSE_ROUTES, ROUTES
from core.search import search

pytestmark = pytest.mark.slow

QUESTION = "How many races has Ana run in 2024?"


@pytest.fixture(scope="module")
def engine(memsense_pg, embed_endpoint):
    from core.recall.memsense.engine import PostgresEngine

    eng = PostgresEngine(memsense_pg.dsn, embedder=embed_endpoint.url + "/embed")
    yield eng
    eng.close()


def _one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and msg, msg
    return msg


def test_users_are_listed_from_the_database(engine):
    assert engine.users() == ["demo-ana", "demo-mei", "demo-raj", "pending-user", "wide-user"]


def test_the_stored_model_column_is_shown(engine):
    assert engine.model_text == "sentence-transformers/all-MiniLM-L6-v2 (384 dims), acme/tiny-8d (8 dims)"


def test_dense_routes_rank_by_cosine_of_the_stored_vectors(engine, memsense_pg, embed_endpoint):
    from core.recall.memsense.sql import query_literal

    pool = engine.recall("demo-ana", QUESTION)
    qvec = np.array(query_literal(engine.embed_query("demo-ana", QUESTION))[1:-1].split(","), dtype=float)
    chunks = memsense_pg.chunks
    for route in DENSE_ROUTES:
        j = ROUTES.index(route)
        rows = [i for i, c in enumerate(chunks) if c.user_id == "demo-ana" and memsense_pg.vectors[route][i].any()]
        stored = np.array([[float(f"{x:.8f}") for x in memsense_pg.vectors[route][i]] for i in rows])
        cos = stored @ qvec / (np.linalg.norm(stored, axis=1) * np.linalg.norm(qvec))
        cos_of = {chunks[rows[k]].memory_id: cos[k] for k in range(len(rows))}
        found = pool.ranks[:, j] > 0
        got = [pool.chunks[i].memory_id for i in np.flatnonzero(found)[np.argsort(pool.ranks[found, j])]]
        assert len(got) == len(rows), route  # depth 8000: every chunk with that vector is in the list
        assert set(got) == set(cos_of), route
        in_order = [cos_of[m] for m in got]  # best first; equal vectors (shared facets) tie in any order
        assert all(a >= b - 1e-9 for a, b in zip(in_order, in_order[1:])), route
        raw = {pool.chunks[i].memory_id: pool.scores[i, j] for i in np.flatnonzero(found)}
        assert max(abs(raw[chunks[rows[k]].memory_id] - cos[k]) for k in range(len(rows))) < 1e-6


def test_lexical_route_is_postgres_full_text_with_and_semantics(engine):
    pool = engine.recall("demo-ana", "bees hive")
    j = ROUTES.index("lexical")
    hits = np.flatnonzero(pool.ranks[:, j] > 0)
    assert len(hits) > 0
    for i in hits:
        text = pool.chunks[i].lexical_text.lower()
        assert "bee" in text and "hive" in text  # every query word (English stems) must match
        assert pool.scores[i, j] > 0  # ts_rank_cd
    by_rank = sorted(hits, key=lambda i: pool.ranks[i, j])
    assert all(pool.scores[a, j] >= pool.scores[b, j] for a, b in zip(by_rank, by_rank[1:]))
    nothing = engine.recall("demo-ana", "bees zeppelin")  # one word matches nothing: AND finds no chunk
    assert not (nothing.ranks[:, j] > 0).any()


def test_search_is_scoped_to_active_chunks_of_tenant_scope_and_user(engine):
    ranking = search(engine, "demo-ana", QUESTION)
    assert len(ranking.results) == 4
    assert {c.user_id for c in ranking.pool.chunks} == {"demo-ana"}
    assert "other-tenant-1" not in ranking.pool.ids
    assert all(r["memory_id"].startswith("demo-ana:") for r in ranking.results)


def test_chunks_carry_what_memsense_stores(engine, memsense_pg):
    stored = {c.memory_id: c for c in memsense_pg.chunks if c.user_id == "demo-raj"}
    read = {c.memory_id: c for c in engine.chunks("demo-raj")}
    assert read.keys() == stored.keys()
    for mid, c in read.items():
        s = stored[mid]
        assert (c.kind, c.session_number, c.user_text, c.assistant_text, c.tags, c.task_tag, c.events, c.memory_score) == \
            (s.kind, s.session_number, s.user_text, s.assistant_text, s.tags, s.task_tag, s.events, s.memory_score)


def _fingerprint(dsn: str) -> tuple:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT md5(string_agg(t::text, '|' ORDER BY t.id)) FROM memory_chunks t").fetchone()
        emb = conn.execute("SELECT md5(string_agg(t::text, '|' ORDER BY t.chunk_id)) FROM memory_chunk_embeddings t").fetchone()
        conn.execute("SELECT pg_stat_force_next_flush()")
        stats = conn.execute("SELECT sum(n_tup_ins), sum(n_tup_upd), sum(n_tup_del) FROM pg_stat_user_tables").fetchone()
    return rows, emb, stats


def test_the_database_is_never_written_to(memsense_pg, embed_endpoint, tmp_path):
    import psycopg

    from core.recall.memsense.engine import PostgresEngine

    before = _fingerprint(memsense_pg.dsn)
    eng = PostgresEngine(memsense_pg.dsn, embedder=embed_endpoint.url + "/embed")
    try:
        for user in ("demo-ana", "demo-mei"):
            eng.chunks(user)
            search(eng, user, QUESTION)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            with eng.store.conn.cursor() as cur:
                cur.execute("UPDATE memory_chunks SET score = 1 WHERE memory_id = 'demo-ana:S001:P00'")
        eng.store.conn.rollback()
    finally:
        eng.close()
    assert _fingerprint(memsense_pg.dsn) == before


@pytest.mark.parametrize("dsn_of, words", [
    (lambda db, port: f"postgresql://postgres@127.0.0.1:{port}/memsense", "no PostgreSQL answers"),
    (lambda db, port: db.dsn.rsplit("/", 1)[0] + "/nosuchdb", "does not exist"),
    (lambda db, port: db.dsn.rsplit("/", 1)[0] + "/postgres", "not a Memsense database"),
    (lambda db, port: "postgresql://postgres@127.0.0.1:notaport/memsense", "not a PostgreSQL address"),
])
def test_bad_database_addresses_give_one_line(memsense_pg, memsense_db, embed_endpoint, dsn_of, words):
    from core.recall.memsense.engine import PostgresEngine

    with pytest.raises(MemsenseError) as exc:
        PostgresEngine(dsn_of(memsense_pg, memsense_db.free_port()), embedder=embed_endpoint.url + "/embed")
    assert words in _one_line(exc)


def test_wrong_tenant_names_the_tenants_there(memsense_pg, embed_endpoint):
    from core.recall.memsense.engine import PostgresEngine

    with pytest.raises(MemsenseError) as exc:
        PostgresEngine(memsense_pg.dsn, tenant="nobody", embedder=embed_endpoint.url + "/embed")
    msg = _one_line(exc)
    assert "tenant 'nobody'" in msg and "--tenant default --scope user" in msg and "--tenant acme" in msg


@pytest.mark.parametrize("user, words", [
    ("nobody", "unknown user 'nobody'"),
    ("gone-user", "none is active"),
    ("pending-user", "no stored vectors"),
    ("wide-user", "has 384 dimensions but 'wide-user'"),
])
def test_users_that_cannot_be_searched_give_one_line(engine, user, words):
    with pytest.raises(MemsenseError) as exc:
        search(engine, user, QUESTION)
    assert words in _one_line(exc)


def test_embedding_endpoint_down_slow_or_of_another_model(memsense_pg, memsense_db, embed_endpoint):
    from core.recall.memsense.engine import PostgresEngine

    def fails(url: str, **kw) -> str:
        eng = PostgresEngine(memsense_pg.dsn, embedder=url, **kw)
        try:
            with pytest.raises(MemsenseError) as exc:
                search(eng, "demo-ana", QUESTION)
            return _one_line(exc)
        finally:
            eng.close()

    assert "cannot reach the embedding endpoint" in fails(f"http://127.0.0.1:{memsense_db.free_port()}/embed")
    slow = memsense_db.EmbeddingEndpoint(lambda t: [1.0] * 384, delay_s=2.0)
    other = memsense_db.EmbeddingEndpoint(lambda t: [1.0] * 384, model="BAAI/bge-small-en-v1.5")
    try:
        assert "did not answer within 0.5 s" in fails(slow.url + "/embed", embed_timeout=0.5)
        msg = fails(other.url + "/v1/embeddings")
        assert "embeds with BAAI/bge-small-en-v1.5" in msg and "sentence-transformers/all-MiniLM-L6-v2" in msg
        assert "HTTP 404" in fails(other.url + "/nowhere")
    finally:
        slow.close()
        other.close()


def test_both_request_shapes_give_the_same_ranking(memsense_pg, embed_endpoint, engine):
    from core.recall.memsense.engine import PostgresEngine

    openai = PostgresEngine(memsense_pg.dsn, embedder=embed_endpoint.url + "/v1/embeddings")
    try:
        assert search(openai, "demo-mei", QUESTION).result_ids == search(engine, "demo-mei", QUESTION).result_ids
    finally:
        openai.close()


def test_a_model_folder_must_be_the_stored_model(memsense_pg, tmp_path):
    from core.recall.embedding.embedder import default_model_path
    from core.recall.memsense.engine import PostgresEngine

    eng = PostgresEngine(memsense_pg.dsn, embedder=str(default_model_path()))
    try:
        assert len(search(eng, "demo-ana", QUESTION).results) == 4
    finally:
        eng.close()
    (tmp_path / "some-model").mkdir()
    eng = PostgresEngine(memsense_pg.dsn, embedder=str(tmp_path / "some-model"))
    try:
        with pytest.raises(MemsenseError) as exc:
            search(eng, "demo-ana", QUESTION)
        assert "made by sentence-transformers/all-MiniLM-L6-v2" in _one_line(exc)
    finally:
        eng.close()


def test_import_copies_chunks_and_stored_vectors_without_embedding(memsense_pg, embed_endpoint, engine, tmp_path,
                                                                   model_cache, capsys):
    from core.cli.main import main
    from core.config import Config
    from core.recall.engine import Engine

    store = tmp_path / "copy"
    before = _fingerprint(memsense_pg.dsn)
    assert main(["import", memsense_pg.dsn, "--store", str(store), "--user", "demo-ana", "--json"]) == 0
    assert _fingerprint(memsense_pg.dsn) == before
    report = __import__("json").loads(capsys.readouterr().out)
    assert report["users"] == ["demo-ana"] and report["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    copy = Engine(store, cache_dir=model_cache)
    try:
        assert copy.users() == ["demo-ana"]
        assert [c.memory_id for c in copy.chunks("demo-ana")] == [c.memory_id for c in engine.chunks("demo-ana")]
        # the four text routes: same stored vectors, so same ranks and scores (the facet routes tie, as
        # facets are shared by a session, and the lexical route is BM25 in the copy)
        dense = Config().with_weights(lexical=0.0, facet_personal_info=0.0, facet_preferences=0.0, facet_events=0.0)
        ours, theirs = search(copy, "demo-ana", QUESTION, dense), search(engine, "demo-ana", QUESTION, dense)
        assert ours.result_ids == theirs.result_ids
        assert [r["final_score"] for r in ours.results] == [r["final_score"] for r in theirs.results]
    finally:
        copy.close()
    assert main(["import", memsense_pg.dsn, "--store", str(tmp_path / "x"), "--user", "pending-user"]) == 1
    assert "no stored vectors" in capsys.readouterr().err


def test_a_lost_connection_is_one_line_and_the_next_search_reconnects(engine, memsense_pg):
    import psycopg

    search(engine, "demo-ana", QUESTION)
    pid = engine.store.conn.info.backend_pid
    with psycopg.connect(memsense_pg.dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(MemsenseError) as exc:
        search(engine, "demo-ana", "a question never asked before")
    assert "connection to the Memsense database" in _one_line(exc) and "reconnects" in str(exc.value)
    assert len(search(engine, "demo-ana", QUESTION).results) == 4
    assert engine.store.conn.info.backend_pid != pid
