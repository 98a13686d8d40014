"""Every network request has a deadline for the whole request, and no secret in its messages.

The servers are loopback ones that drip one byte every 0.5 s (a timeout per socket read never
trips on them) or echo the request's headers in an error page (tests/recall/drip_server.py).
"""
from __future__ import annotations

import time

import pytest

from core.errors import MemsenseError
from core.recall.http_post import HttpFailure, post_json
from core.recall.embedding.endpoint import EndpointEmbedder
from core.recall.memsense.service import service_search
from tests.recall.drip_server import DripServer, EchoServer

DEADLINE = 2.0
SLACK = 1.5  # thread start-up and a loaded 2-core machine; a per-read timeout would take the drip's 20 s
SECRET = "s3cr3t-XYZ"


def _elapsed(fn) -> tuple[float, BaseException]:
    t0 = time.monotonic()
    with pytest.raises((HttpFailure, MemsenseError)) as info:
        fn()
    return time.monotonic() - t0, info.value


@pytest.mark.parametrize("stage", ["headers", "body"])
def test_a_drip_trips_the_deadline_of_the_whole_request(stage):
    with DripServer(stage) as server:
        took, exc = _elapsed(lambda: post_json(server.url + "/embed", {"input": "q"}, timeout=DEADLINE))
    assert isinstance(exc, HttpFailure) and exc.kind == "timeout"
    assert DEADLINE - 0.1 <= took < DEADLINE + SLACK, took


def test_the_embedder_names_its_timeout_and_hides_the_token_of_its_url():
    with DripServer("headers") as server:
        url = server.url.replace("http://", f"http://user:{SECRET}@") + f"/embed?token={SECRET}"
        embedder = EndpointEmbedder(url, "sentence-transformers/all-MiniLM-L6-v2", timeout=DEADLINE)
        took, exc = _elapsed(lambda: embedder.embed("how many races?"))
        sent = server.requests[0]
    message = str(exc)
    assert took < DEADLINE + SLACK and "did not answer within 2 s" in message and "--embed-timeout" in message
    assert SECRET not in message and "user:***@" in message and "token=***" in message
    assert sent["headers"]["Authorization"].startswith("Basic ")  # the user info is sent as Basic auth, not in the URL


def test_the_service_has_a_deadline_too():
    with DripServer("body") as server:
        took, exc = _elapsed(lambda: service_search(server.url, tenant="default", scope="user", user="u", query="q",
                                                    top_k=4, timeout=DEADLINE))
    assert took < DEADLINE + SLACK and "did not answer within 2 s" in str(exc) and "--service-timeout" in str(exc)


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), 0, "abc"])
def test_a_timeout_must_be_positive_and_finite(bad):
    with pytest.raises(MemsenseError, match="--embed-timeout must be"):
        EndpointEmbedder("http://127.0.0.1:9/embed", "m", timeout=bad)
    with pytest.raises(MemsenseError, match="--service-timeout must be"):
        service_search("http://127.0.0.1:9", tenant="t", scope="s", user="u", query="q", top_k=4, timeout=bad)


def test_an_error_page_that_echoes_the_authorization_header_shows_no_secret(monkeypatch):
    monkeypatch.setenv("MEMSENSE_EMBEDDER_KEY", f"sk-{SECRET}")
    with EchoServer(401) as server:
        embedder = EndpointEmbedder(server.url + "/v1/embeddings", "m", timeout=DEADLINE)
        with pytest.raises(MemsenseError) as info:
            embedder.embed("q")
        assert server.requests[0]["headers"]["Authorization"] == f"Bearer sk-{SECRET}"  # it was sent...
    message = str(info.value)
    assert SECRET not in message and "HTTP 401" in message  # ...and never shown
    excerpt = message.split("HTTP 401 (", 1)[1].rsplit("); check", 1)[0]
    assert len(excerpt) <= 120 and "\n" not in message


def test_an_unreachable_service_hides_the_secrets_of_its_url():
    with pytest.raises(MemsenseError) as info:
        service_search(f"http://u:{SECRET}@127.0.0.1:9/?api_key={SECRET}", tenant="t", scope="s", user="u",
                       query="q", top_k=4, timeout=DEADLINE)
    assert "cannot reach the Memsense service at http://u:***@127.0.0.1:9/?api_key=***" in str(info.value)
    assert SECRET not in str(info.value)
