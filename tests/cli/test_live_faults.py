"""A live Memsense's servers misbehaving, through the real CLI: an embedder and a service that
drip one byte every 0.5 s trip their whole-request deadlines; a database read over its
statement_timeout is one line; no secret of any address is shown; and a production-vs-
reproduction difference under non-default settings is explained by the settings.

The database is a real PostgreSQL (fixture `memsense_pg`); the servers are loopback ones.
"""
from __future__ import annotations

import json
import time

import pytest

from core.cli.main import main
from tests.recall.drip_server import DripServer, EchoServer

pytestmark = pytest.mark.slow

QUESTION = "List all the trips Ana took."
SECRET = "s3cr3t-XYZ"
SLACK = 2.0


def _run(capsys, *argv: str) -> tuple[int, str, str, float]:
    t0 = time.monotonic()
    code = main(list(argv))
    took = time.monotonic() - t0
    out = capsys.readouterr()
    return code, out.out, out.err, took


def _one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("memsense: error: "), err
    assert SECRET not in err and "Traceback" not in err
    return lines[0]


def test_a_dripping_embedder_trips_embed_timeout(memsense_pg, capsys):
    with DripServer("headers") as drip:
        url = drip.url.replace("http://", f"http://user:{SECRET}@") + f"/embed?token={SECRET}"
        code, _, err, took = _run(capsys, "search", "--store", memsense_pg.dsn, "--embedder", url,
                                    "--embed-timeout", "2", "--user", "demo-ana", QUESTION)
    line = _one_line(err)
    assert code == 1 and took < 2 + SLACK + 3  # + opening the database
    assert "did not answer within 2 s" in line and "http://user:***@127.0.0.1" in line and "token=***" in line


def test_a_dripping_service_trips_service_timeout(memsense_pg, embed_endpoint, capsys):
    with DripServer("body") as drip:
        code, _, err, took = _run(capsys, "search", "--store", memsense_pg.dsn, "--embedder",
                                    embed_endpoint.url + "/embed", "--service", drip.url.replace("http://", f"http://{SECRET}@"),
                                    "--service-timeout", "2", "--user", "demo-ana", QUESTION)
    line = _one_line(err)
    assert code == 1 and took < 2 + SLACK + 5  # + the search itself
    assert "the Memsense service at http://***@127.0.0.1" in line and "did not answer within 2 s" in line


def test_an_embedder_error_page_echoing_headers_shows_no_key(memsense_pg, capsys, monkeypatch):
    monkeypatch.setenv("MEMSENSE_EMBEDDER_KEY", f"sk-{SECRET}")
    with EchoServer(401) as echo:
        code, _, err, _ = _run(capsys, "search", "--store", memsense_pg.dsn, "--embedder",
                                 echo.url + "/v1/embeddings", "--user", "demo-ana", QUESTION)
        assert echo.requests[0]["headers"]["Authorization"] == f"Bearer sk-{SECRET}"
    assert code == 1 and "HTTP 401" in _one_line(err)


def test_a_read_over_the_statement_timeout_is_one_line(memsense_pg, monkeypatch):
    from core.errors import MemsenseError
    from core.recall.memsense import session as pg_session

    monkeypatch.setattr(pg_session, "STATEMENT_TIMEOUT_MS", 200)
    session = pg_session.ReadOnlySession(memsense_pg.dsn)
    try:
        with pytest.raises(MemsenseError, match=r"did not finish a read within 0\.2 s \(statement_timeout\)"):
            session.rows("SELECT pg_sleep(3)")
        assert session.rows("SELECT 1 AS one") == [{"one": 1}]  # the session is still usable
    finally:
        session.close()


def test_a_difference_under_other_settings_is_explained_by_the_settings(memsense_pg, embed_endpoint, capsys, tmp_path,
                                                                        memsense_db):
    """Memsense's search API takes no re-rank options: with alpha changed, production (always its
    defaults) cannot agree, and the reason says so instead of blaming the query embedding."""
    base = ["search", "--store", memsense_pg.dsn, "--embedder", embed_endpoint.url + "/embed", "--user", "demo-ana",
            QUESTION, "--json"]
    code, out, err, _ = _run(capsys, *base)
    assert code == 0, err
    service = memsense_db.FakeService()
    try:
        service.answer = [{k: r[k] for k in ("memory_id", "final_score", "rrf_score")}
                          for r in json.loads(out)["results"]]  # production: Memsense's defaults
        config = tmp_path / "alpha.json"
        config.write_text(json.dumps({"alpha": 0.5}))
        code, out, err, _ = _run(capsys, *base, "--service", service.url, "--config", str(config))
    finally:
        service.close()
    verdict = json.loads(out)["production"]
    assert code == 0 and not verdict["matches"]
    assert "alpha 0.5 (Memsense: 0.1)" in verdict["settings"] and "takes no re-rank options" in verdict["settings"]
    reasons = [x["reason"] for x in verdict["lines"] if not x["matches"]]
    assert reasons and all("takes no re-rank options" in r for r in reasons)
    assert not any("query embedding" in r for r in reasons)
    assert "takes no re-rank options" in verdict["summary"]


# ---------------------------------------------------------------- issue 39, class 7: a live Memsense of another shape
# or with fewer rights than the reproduction needs: one line each, no partial results shown as whole.

def _copy_of(memsense_pg, name: str, *statements: str) -> str:
    """A copy of the test's Memsense database (the shared one is left alone), changed by `statements`."""
    import psycopg

    with psycopg.connect(memsense_pg.server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name} TEMPLATE memsense")
    with psycopg.connect(memsense_pg.server.dsn(name), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)
    return memsense_pg.server.dsn(name)


def test_an_older_schema_without_a_route_column_is_one_line(memsense_pg, embed_endpoint, capsys):
    dsn = _copy_of(memsense_pg, "older_schema", "ALTER TABLE memory_chunk_embeddings DROP COLUMN embedding_facet_events")
    code, out, err, _ = _run(capsys, "search", "--store", dsn, "--embedder", embed_endpoint.url + "/embed", "--user", "demo-ana",
                             QUESTION)
    assert code == 1 and out == "" and "embedding_facet_events" in _one_line(err)


def test_a_role_that_may_not_read_one_table_is_one_line(memsense_pg, embed_endpoint, capsys):
    dsn = _copy_of(memsense_pg, "fewer_rights", "DROP ROLE IF EXISTS reader_39",
                   f"CREATE ROLE reader_39 LOGIN PASSWORD '{SECRET}'", "GRANT SELECT ON memory_chunks TO reader_39")
    dsn = dsn.replace("postgres@", f"reader_39:{SECRET}@")
    code, out, err, _ = _run(capsys, "search", "--store", dsn, "--embedder", embed_endpoint.url + "/embed", "--user", "demo-ana",
                             QUESTION)
    line = _one_line(err)
    assert code == 1 and out == "" and "may not read the table memory_chunk_embeddings" in line and SECRET not in line
