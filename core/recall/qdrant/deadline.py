"""A deadline for the whole of every request to a Qdrant server, and one message for its faults.

qdrant-client talks to a server through httpx, whose timeouts bound each connect, read and
write: a server that sends a byte every 2 s never trips them. `DeadlineTransport` is the httpx
transport of the client (qdrant-client hands its keyword arguments to `httpx.Client`): every
request gets an end time, and each network operation of it, from the connect to the last byte of
the body, waits at most until that end (httpcore's network backend is wrapped to shorten each
timeout to the time left). Past the end the request fails with httpx's own timeout error, within
the deadline whatever the server sends. Proxies from the environment are honoured as httpx
honours them (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`).

`guarded` wraps the client so that a failed request of any method is one `MemsenseError` naming
the server (redacted) and the fix, never a traceback.
"""
from __future__ import annotations

import functools
import json
import os
import ssl
import threading
import time
import urllib.request
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, TypeVar
from urllib.parse import urlsplit

import httpcore
import httpx

from core.errors import MemsenseError
from core.recall.timeouts import QDRANT_TIMEOUT_S, check_timeout
from core.redact import body_excerpt, redact, redact_url

TIMEOUT_VARIABLE = "MEMSENSE_QDRANT_TIMEOUT"
"""Seconds for a whole request to a Qdrant server (default `QDRANT_TIMEOUT_S`)."""

_now = threading.local()  # .end: the monotonic end of the request this thread is making


def qdrant_timeout(seconds: object = None) -> float:
    """The deadline of one request: `seconds`, else $MEMSENSE_QDRANT_TIMEOUT, else the default;
    positive and finite, or one MemsenseError naming where it came from."""
    if seconds is not None:
        return check_timeout(seconds, "the Qdrant timeout")
    value = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    return check_timeout(value, TIMEOUT_VARIABLE) if value else QDRANT_TIMEOUT_S


def _left(timeout: float | None, expired: type[httpcore.TimeoutException]) -> float | None:
    """`timeout` shortened to the time left before the current request's end."""
    end = getattr(_now, "end", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise expired("the whole-request deadline passed")
    return left if timeout is None else min(timeout, left)


@contextmanager
def _until(end: float) -> Iterator[None]:
    before = getattr(_now, "end", None)
    _now.end = end
    try:
        yield
    finally:
        _now.end = before


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's own synchronous backend, each wait shortened to the request's time left."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                               socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout), (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout), (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectError, httpx.ConnectError), (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError), (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError), (httpcore.LocalProtocolError, httpx.LocalProtocolError),
)


@contextmanager
def _as_httpx(request: httpx.Request) -> Iterator[None]:
    """httpcore's errors as the httpx errors qdrant-client expects of a transport."""
    try:
        yield
    except httpcore.TimeoutException as exc:
        raise next(to for frm, to in _ERRORS if isinstance(exc, frm))(str(exc), request=request) from exc
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError, httpcore.UnsupportedProtocol) as exc:
        kind = next((to for frm, to in _ERRORS if isinstance(exc, frm)), httpx.TransportError)
        raise kind(str(exc), request=request) from exc


class _Body(httpx.SyncByteStream):
    """A response body read under its request's deadline."""

    def __init__(self, inner: Iterable[bytes], end: float, request: httpx.Request):
        self._inner, self._end, self._request = inner, end, request

    def __iter__(self) -> Iterator[bytes]:
        parts = iter(self._inner)
        while True:
            with _until(self._end), _as_httpx(self._request):
                part = next(parts, None)
            if part is None:
                return
            yield part

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport whose every request ends within `seconds`, whatever the server does."""

    def __init__(self, url: str, seconds: float):
        self.seconds = qdrant_timeout(seconds)
        backend = _Backend()
        context = httpx.create_ssl_context()
        proxy = _environment_proxy(url)
        self._pool: httpcore.ConnectionPool = (
            httpcore.ConnectionPool(ssl_context=context, network_backend=backend) if proxy is None else
            httpcore.HTTPProxy(proxy_url=proxy, ssl_context=context, network_backend=backend))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        end = time.monotonic() + self.seconds
        assert isinstance(request.stream, httpx.SyncByteStream)
        req = httpcore.Request(method=request.method, url=httpcore.URL(
            scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
            target=request.url.raw_path), headers=request.headers.raw, content=request.stream,
            extensions=request.extensions)
        with _until(end), _as_httpx(request):
            resp = self._pool.handle_request(req)
        assert isinstance(resp.stream, Iterable)
        return httpx.Response(status_code=resp.status, headers=resp.headers, stream=_Body(resp.stream, end, request),
                              extensions=resp.extensions)

    def close(self) -> None:
        self._pool.close()


def _environment_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (None: connect directly), as httpx reads it."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    if not proxies or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


T = TypeVar("T")


def guarded(client: T, url: str, seconds: float) -> T:
    """`client` whose methods raise one MemsenseError for a failed request (see `failure`)."""
    return _Guarded(client, url, seconds)  # type: ignore[return-value]


class _Guarded:
    def __init__(self, client: Any, url: str, seconds: float):
        self._client, self._url, self._seconds = client, url, seconds

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return attr(*args, **kwargs)
            except MemsenseError:
                raise
            except Exception as exc:
                error = failure(exc, self._url, self._seconds)
                if error is None:
                    raise
                raise error from None

        return call


def failure(exc: BaseException, url: str, seconds: float) -> MemsenseError | None:
    """The one-line error for a failed request to the Qdrant server at `url` (None: not a request's
    failure, a bug to show as it is)."""
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    where = f"the Qdrant server at {redact_url(url)}"
    cause = exc.source if isinstance(exc, ResponseHandlingException) else exc
    if isinstance(cause, httpx.TimeoutException):
        return MemsenseError(f"{where} did not answer within {seconds:g} s; check that it is running and reachable "
                             f"(or raise {TIMEOUT_VARIABLE}, in seconds)")
    if isinstance(cause, httpx.TransportError):
        reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        return MemsenseError(f"cannot reach {where} ({redact(reason)}); start the server or check the address "
                             "(http://HOST:PORT, Qdrant's default port is 6333)")
    if isinstance(cause, UnexpectedResponse):
        detail = _reason(cause.content) or cause.reason_phrase
        fix = "check its API key" if cause.status_code in (401, 403) else "check the address and the server's log"
        return MemsenseError(f"{where} answered HTTP {cause.status_code} ({detail}); {fix}")
    return None


def _reason(content: bytes) -> str:
    """The excerpt of an error body; Qdrant's own shape is `{"status": {"error": "…"}}`."""
    try:
        status = json.loads(content).get("status")
    except (ValueError, AttributeError):
        status = None
    if isinstance(status, dict) and isinstance(status.get("error"), str):
        content = json.dumps({"error": status["error"]}).encode()
    return body_excerpt(content)
