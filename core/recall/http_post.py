"""One JSON POST with a deadline for the whole request: connecting, sending, the status line,
the headers and the body, redirects included.

A socket timeout (what `urllib.request.urlopen(timeout=...)` sets) bounds each read, not the
request: a server that sends one byte every 2 s never trips it. Here a timer shuts the
request's sockets down when the deadline passes, so a blocked read returns at once, and the
request fails with `HttpFailure("timeout")` within the deadline whatever the server does. It
is built on urllib's own opener (proxies from the environment and redirects work as before);
only the connection classes are wrapped, to know the sockets and to keep each socket timeout
within the time left.

Used by the query embedder (`core.recall.embedding.endpoint`) and the service client
(`core.recall.memsense.service`); `failure_error` turns an `HttpFailure` into their one-line
error, each giving the fixes that fit it.
"""
from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Self
from urllib.parse import unquote, urlsplit, urlunsplit

from core.errors import MemsenseError
from core.recall.timeouts import check_timeout
from core.redact import body_excerpt, redact

__all__ = ["HttpFailure", "check_timeout", "failure_error", "post_json"]

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""An answer longer than this is not an embedding or a search result: refused, not read into memory."""


class HttpFailure(Exception):
    """A request that got no usable answer. `kind`: "timeout", "status" (an HTTP error code,
    with `status` and a redacted `excerpt` of the body), "unreachable" or "too-large"."""

    def __init__(self, kind: str, detail: str = "", status: int | None = None):
        super().__init__(detail or kind)
        self.kind, self.detail, self.status = kind, detail, status


def failure_error(exc: HttpFailure, where: str, timeout: float, *, longer: str, status_fix: str, is_it: str,
                  reach_fix: str) -> MemsenseError:
    """The one-line error for a request to `where` that failed with `exc`: no answer within
    `timeout` s (raise the option `longer`), an HTTP error status (`status_fix`), an answer too
    large (`is_it`: the question whether `where` is what was meant) or no connection (`reach_fix`)."""
    if exc.kind == "timeout":
        return MemsenseError(f"{where} did not answer within {timeout:g} s; check that it is running (or raise {longer})")
    if exc.kind == "status":
        return MemsenseError(f"{where} answered HTTP {exc.status} ({exc.detail}); {status_fix}")
    if exc.kind == "too-large":
        return MemsenseError(f"{where} answered {exc.detail}; {is_it}")
    return MemsenseError(f"cannot reach {where} ({exc.detail}); {reach_fix}")


class _Deadline:
    """The end of one request: when it passes, every socket of the request is shut down."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds
        self.expired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.expire)
        self._timer.daemon = True

    def left(self) -> float:
        return max(0.001, self.end - time.monotonic())

    def track(self, sock: socket.socket) -> None:
        """The socket itself, not its connection: urllib drops the connection's reference once the
        headers are read, while the body is still read from the same socket."""
        with self._lock:
            self._socks.append(sock)
            late = self.expired or time.monotonic() >= self.end
        if late:
            self.expire()

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            socks = list(self._socks)
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # a blocked read returns at once
            except OSError:
                pass

    def __enter__(self) -> Self:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _opener(deadline: _Deadline) -> urllib.request.OpenerDirector:
    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            self.timeout = deadline.left()  # no socket wait beyond the deadline
            super().connect()
            deadline.track(self.sock)

    class SecureConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            self.timeout = deadline.left()
            super().connect()
            deadline.track(self.sock)

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(Connection, req)

    class SecureHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(SecureConnection, req, context=self._context)  # type: ignore[attr-defined]

    return urllib.request.build_opener(Handler(), SecureHandler())


def _credentials(url: str) -> tuple[str, dict[str, str]]:
    """`url` without its user info, and the Basic authorization header that user info means."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, {}
    token = base64.b64encode(f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()).decode()
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host)), {"authorization": f"Basic {token}"}


def post_json(url: str, payload: Any, *, timeout: float, headers: dict[str, str] | None = None) -> bytes:
    """The body of a 2xx answer to `POST url` with `payload` as JSON, within `timeout` seconds
    in all; anything else is an `HttpFailure`."""
    target, auth = _credentials(url)
    all_headers = {"content-type": "application/json", **auth, **(headers or {})}
    req = urllib.request.Request(target, data=json.dumps(payload).encode(), headers=all_headers, method="POST")
    with _Deadline(timeout) as deadline:
        try:
            with _opener(deadline).open(req, timeout=timeout) as resp:
                raw = resp.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as exc:
            if deadline.expired:
                raise HttpFailure("timeout") from None
            raise HttpFailure("status", _excerpt(exc), exc.code) from None
        except (OSError, http.client.HTTPException, ValueError) as exc:  # URLError is an OSError
            if deadline.expired or _is_timeout(exc):
                raise HttpFailure("timeout") from None
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise HttpFailure("unreachable", redact(str(reason) or type(exc).__name__)) from None
        if deadline.expired:  # a close-delimited body cut short by the deadline reads as complete
            raise HttpFailure("timeout")
    if len(raw) > MAX_ANSWER_BYTES:
        raise HttpFailure("too-large", f"more than {MAX_ANSWER_BYTES // 2**20} MB")
    return raw


def _excerpt(exc: urllib.error.HTTPError) -> str:
    try:
        return body_excerpt(exc.read(4096)) or str(exc.reason)
    except (OSError, http.client.HTTPException):
        return str(exc.reason)


def _is_timeout(exc: BaseException) -> bool:
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    return isinstance(reason, (socket.timeout, TimeoutError))
