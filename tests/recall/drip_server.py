"""Loopback HTTP servers that misbehave on purpose, for the network fault tests.

`DripServer` answers every request one byte at a time, a byte every `interval` seconds: in the
status line and headers (`stage="headers"`) or in the body after complete headers
(`stage="body"`). A timeout per socket read never trips on it (a byte always comes in time);
only a deadline for the whole request does. The server is bounded: each answer stops after
`limit` seconds, and `close()` (or the context manager) stops it, so no test can hang on it.

`EchoServer` answers every request with `status` and a body echoing the request's headers, as
a careless proxy or framework does in an error page (the secret-leak case).
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server:
    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.requests: list[dict] = []
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class DripServer(_Server):
    def __init__(self, stage: str = "headers", interval: float = 0.5, limit: float = 20.0):
        outer = self
        self.stopped = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                outer.requests.append({"path": self.path, "headers": dict(self.headers),
                                       "body": self.rfile.read(int(self.headers.get("content-length") or 0))})
                body = json.dumps({"data": [{"embedding": [0.1] * 8}]}).encode()
                head = (f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
                        "x-padding: " + "p" * 400 + "\r\n\r\n").encode()
                data = head + body if stage == "headers" else body
                if stage == "body":
                    self.wfile.write(head)
                    self.wfile.flush()
                end = time.monotonic() + limit
                try:
                    for i in range(len(data)):
                        if time.monotonic() > end or outer.stopped.is_set():
                            return
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        outer.stopped.wait(interval)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up: what the test wants

            def log_message(self, *args):
                pass

        super().__init__(Handler)

    def close(self) -> None:
        self.stopped.set()
        super().close()


class EchoServer(_Server):
    def __init__(self, status: int = 401):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                outer.requests.append({"path": self.path, "headers": dict(self.headers)})
                self.rfile.read(int(self.headers.get("content-length") or 0))
                echoed = "".join(f"{k}: {v}\n" for k, v in self.headers.items())
                body = f"unauthorized; your request was:\n{echoed}".encode()
                self.send_response(status)
                self.send_header("content-type", "text/plain")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        super().__init__(Handler)
