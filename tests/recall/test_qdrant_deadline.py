"""Every request to a Qdrant server ends within its deadline (fault injection).

A fake Qdrant on 127.0.0.1 answers `GET /collections` as Qdrant does (so a store opens) and
drips every other answer one byte every 2 s, in the status line and headers or in the body:
httpx's timeouts, which bound each read, never trip on it; the whole-request deadline must, in
about its length, with one `memsense: error:` line naming the server (redacted) and the fix.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from core.cli.main import main
from core.errors import MemsenseError
from core.recall.qdrant.deadline import TIMEOUT_VARIABLE, DeadlineTransport, qdrant_timeout
from core.recall.qdrant.store import QdrantStore
from core.recall.timeouts import QDRANT_TIMEOUT_S

DRIP_S = 2.0  # one byte every 2 s: a per-read timeout of 10 s never trips
DEADLINE = 3.0
SLACK = 1.5  # thread start-up on a loaded 2-core machine; the drip of one answer lasts 60 s or more
SECRET = "s3cr3t-QD"
COLLECTIONS = json.dumps({"result": {"collections": []}, "status": "ok", "time": 0.0}).encode()


class SlowQdrant:
    """`GET /collections` answered at once (unless `drip_all`); any other request dripped
    (`stage` "headers" or "body") or, with `status`, answered at once with that error."""

    def __init__(self, stage: str = "headers", drip_all: bool = False, status: int | None = None):
        outer = self
        self.stop = threading.Event()
        self.paths: list[str] = []
        self.sizes: list[int] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                outer.sizes.append(len(self.rfile.read(int(self.headers.get("content-length") or 0))))
                outer.paths.append(f"{self.command} {self.path}")
                if self.path.split("?")[0] == "/collections" and not drip_all:
                    return self._send(200, COLLECTIONS)
                if status is not None:
                    return self._send(status, json.dumps({"status": {"error": "service is overloaded"}}).encode())
                body = json.dumps({"result": {"exists": True}, "status": "ok", "time": 0.0}).encode()
                head = (f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
                        "\r\n").encode()
                if stage == "body":
                    self.wfile.write(head)
                    self.wfile.flush()
                for i in range(len(body) if stage == "body" else len(head)):  # far more than the deadline
                    if outer.stop.wait(DRIP_S if i else 0):
                        return
                    try:
                        self.wfile.write((body if stage == "body" else head)[i:i + 1])
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return  # the client gave up: what the test wants

            def _send(self, code: int, data: bytes) -> None:
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> SlowQdrant:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_request_in_time_is_sent_and_read_whole():
    with SlowQdrant() as server, httpx.Client(transport=DeadlineTransport(server.url, DEADLINE)) as client:
        answer = client.post(server.url + "/collections", json={"pad": "x" * 200_000})
        assert answer.status_code == 200 and answer.content == COLLECTIONS
        assert server.sizes == [len(json.dumps({"pad": "x" * 200_000}).replace(" ", ""))]


def timed(fn) -> tuple[float, MemsenseError]:
    t0 = time.monotonic()
    with pytest.raises(MemsenseError) as info:
        fn()
    return time.monotonic() - t0, info.value


@pytest.mark.parametrize("stage", ["headers", "body"])
def test_a_drip_after_the_store_opened_trips_the_deadline(stage):
    with SlowQdrant(stage) as server:
        store = QdrantStore(server.url, timeout=DEADLINE)  # GET /collections: answered at once
        took, exc = timed(store.users)  # GET /collections/memsense_meta/exists: dripped
        assert server.paths[-1].startswith("GET /collections/memsense_meta/exists")
    assert DEADLINE - 0.1 <= took < DEADLINE + SLACK, took
    assert str(exc) == (f"the Qdrant server at {server.url} did not answer within 3 s; check that it is running and "
                        f"reachable (or raise {TIMEOUT_VARIABLE}, in seconds)")


def test_a_drip_from_the_first_request_trips_the_deadline_of_opening():
    with SlowQdrant("body", drip_all=True) as server:
        took, exc = timed(lambda: QdrantStore(server.url, timeout=DEADLINE))
    assert DEADLINE - 0.1 <= took < DEADLINE + SLACK, took
    assert "did not answer within 3 s" in str(exc)


def test_the_command_line_says_it_in_one_line_with_no_secret(monkeypatch, capsys):
    monkeypatch.setenv(TIMEOUT_VARIABLE, str(DEADLINE))
    assert main(["users", "--store", "http://127.0.0.1:9"]) == 1  # the command's imports, out of the timing
    capsys.readouterr()
    with SlowQdrant("headers") as server:
        url = server.url.replace("http://", f"http://reader:{SECRET}@") + f"/?api_key={SECRET}"
        t0 = time.monotonic()
        code = main(["users", "--store", url])
        took = time.monotonic() - t0
    err = capsys.readouterr().err
    assert code == 1 and took < DEADLINE + 2 * SLACK, took  # + parsing, opening; a drip answer lasts minutes
    assert err.count("\n") == 1 and err.startswith("memsense: error: the Qdrant server at http://reader:***@127.0.0.1:")
    assert "did not answer within 3 s" in err and TIMEOUT_VARIABLE in err and SECRET not in err


def test_an_error_answer_is_one_message_not_a_traceback():
    with SlowQdrant(status=503) as server:
        store = QdrantStore(server.url, timeout=DEADLINE)
        with pytest.raises(MemsenseError, match=r"answered HTTP 503 \(service is overloaded\); check the address and the server's log"):
            store.users()


@pytest.mark.parametrize("bad", ["-1", "nan", "inf", "0", "soon"])
def test_the_timeout_must_be_positive_and_finite(bad, monkeypatch, capsys):
    monkeypatch.setenv(TIMEOUT_VARIABLE, bad)
    with pytest.raises(MemsenseError, match=f"{TIMEOUT_VARIABLE} must be a"):
        qdrant_timeout()
    assert main(["users", "--store", "http://127.0.0.1:9"]) == 1  # refused before any request
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"memsense: error: {TIMEOUT_VARIABLE} must be a" in err


def test_the_default_and_the_variable(monkeypatch):
    monkeypatch.delenv(TIMEOUT_VARIABLE, raising=False)
    assert qdrant_timeout() == QDRANT_TIMEOUT_S
    monkeypatch.setenv(TIMEOUT_VARIABLE, " 2.5 ")
    assert qdrant_timeout() == 2.5 and qdrant_timeout(7) == 7.0


def test_a_proxy_of_the_environment_is_used_and_bounded_too(monkeypatch):
    """As httpx would, the requests go through $HTTP_PROXY (here the dripping server)."""
    with SlowQdrant("headers", drip_all=True) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        took, exc = timed(lambda: QdrantStore("http://qdrant.invalid:6333", timeout=DEADLINE))
        assert proxy.paths == ["GET http://qdrant.invalid:6333/collections"]
    assert DEADLINE - 0.1 <= took < DEADLINE + SLACK and "did not answer within 3 s" in str(exc), took
