"""`memsense search --store postgresql://… --service URL`: production beside the reproduction.

The database is a real PostgreSQL (fixture `memsense_pg`); the service here is a loopback
stand-in that answers `POST /v1/memory/search` with what it is told to, so the comparison's
verdicts (match, tie, different chunk, missing) are checked one by one. The real service was
checked by hand (see the README).
"""
from __future__ import annotations

import json

import pytest

from core.cli.main import main

pytestmark = pytest.mark.slow

QUESTION = "List all the trips Ana took."


@pytest.fixture
def service(memsense_db):
    s = memsense_db.FakeService()
    yield s
    s.close()


def _search(memsense_pg, embed_endpoint, capsys, *extra):
    code = main(["search", "--store", memsense_pg.dsn, "--embedder", embed_endpoint.url + "/embed", "--user", "demo-ana",
                 QUESTION, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_search_a_live_database_and_compare_with_the_service(memsense_pg, embed_endpoint, service, capsys):
    code, out, _ = _search(memsense_pg, embed_endpoint, capsys, "--json")
    assert code == 0
    ours = json.loads(out)["results"]
    service.answer = [{k: r[k] for k in ("memory_id", "final_score", "rrf_score", "explain")} for r in ours]
    code, out, _ = _search(memsense_pg, embed_endpoint, capsys, "--service", service.url)
    assert code == 0 and "production and reproduction match: 4/4 results" in out
    assert service.asked[-1] == {"tenant_id": "default", "scope": "user", "user_id": "demo-ana", "query": QUESTION,
                                 "top_k": 4}

    swapped = [dict(service.answer[1]), dict(service.answer[0])] + service.answer[2:]
    swapped[0]["final_score"] = swapped[1]["final_score"] = ours[0]["final_score"]
    service.answer = swapped
    code, out, _ = _search(memsense_pg, embed_endpoint, capsys, "--service", service.url, "--json")
    verdict = json.loads(out)["production"]
    assert not verdict["matches"] and [x["matches"] for x in verdict["lines"]] == [False, False, True, True]
    assert verdict["lines"][1]["reason"].startswith("tie:") is False  # scores differ here: position 2 names its fate

    absent = dict(ours[0], memory_id="demo-ana:S001:T001")
    service.answer = [absent] + service.answer[1:3]
    code, out, _ = _search(memsense_pg, embed_endpoint, capsys, "--service", service.url, "--json")
    lines = json.loads(out)["production"]["lines"]
    assert "here demo-ana:S001:T001 is" in lines[0]["reason"]
    assert lines[3]["reason"] == "production returned fewer results"


def test_cli_errors_are_one_line(memsense_pg, embed_endpoint, capsys, memsense_db):
    code = main(["search", "--store", memsense_pg.dsn, "--tenant", "nobody", "--embedder", embed_endpoint.url,
                 "--user", "demo-ana", QUESTION])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("memsense: error: no chunks for tenant 'nobody'")
    code = main(["search", "--store", memsense_pg.dsn, "--user", "demo-ana", QUESTION])
    err = capsys.readouterr().err
    assert code == 1 and "(--embedder, or Embedder in the app's Connect dialog)" in err
    port = memsense_db.free_port()
    code = main(["search", "--store", memsense_pg.dsn, "--embedder", embed_endpoint.url + "/embed", "--user", "demo-ana",
                 "--service", f"http://127.0.0.1:{port}", QUESTION])
    err = capsys.readouterr().err
    assert code == 1 and "cannot reach the Memsense service" in err and err.count("\n") == 1
    code = main(["ingest", "core/demo/demo-conversations.jsonl", "--store", memsense_pg.dsn])
    assert code == 1 and "only ever read" in capsys.readouterr().err
