"""A local HTTP server that records when each request started and ended (for overlap).

``/slow/<name>`` answers a small HTML page after ``delay_s``; ``/missing/<name>``
answers 404. Every request's (path, start, end) lands in ``requests``, so a test can
assert which requests were in flight together and how often a path was asked for,
without relying on wall time.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def most_at_once(*servers: RecordingServer) -> int:
    """The largest number of requests the servers were serving at the same moment."""
    spans = [(start, end) for server in servers for _, start, end in server.requests]
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    peak = current = 0
    for _, step in edges:  # at equal times an end (-1) sorts before a start
        current += step
        peak = max(peak, current)
    return peak


class RecordingServer:
    def __init__(self, host: str = "127.0.0.1", delay_s: float = 0.4) -> None:
        self.delay_s = delay_s
        self.requests: list[tuple[str, float, float]] = []  # finished ones
        self.arrived: list[str] = []  # every request's path, as it arrives
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, 0), self._handler())
        self.httpd.daemon_threads = True
        self.host = host
        self.port = self.httpd.server_address[1]
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def wait_for(self, path: str, timeout_s: float = 10.0) -> None:
        """Return once a request for ``path`` has arrived (it may still be served)."""
        deadline = time.monotonic() + timeout_s
        while path not in self.arrived:
            assert time.monotonic() < deadline, f"no request for {path}"
            time.sleep(0.01)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, path: str) -> int:
        return sum(1 for seen, _, _ in self.requests if seen == path)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format, *args):  # keep test output quiet
                pass

            def do_GET(self):  # noqa: N802
                start = time.monotonic()
                server.arrived.append(self.path)
                if self.path.startswith("/slow/"):
                    time.sleep(server.delay_s)
                    name = self.path.rsplit("/", 1)[1]
                    body = (
                        f"<html><head><title>Page {name}</title></head><body><article>"
                        f"<h1>Page {name}</h1><p>Vitamin D and calcium supplementation was "
                        f"studied in trial {name} among older adults in nursing homes.</p>"
                        "</article></body></html>"
                    ).encode()
                    status = 200
                else:
                    body, status = b"not found", 404
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with server._lock:
                    server.requests.append((self.path, start, time.monotonic()))

        return Handler
