"""A real HTTP server on 127.0.0.1 for fetcher tests, and recorded API responses."""

from __future__ import annotations

import gzip
import io
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "recorded"
MIB = 1024 * 1024
PAGE_HTML = (
    b"<!DOCTYPE html><html><head><title>Local page</title></head>"
    b"<body><p>Hello from the local test server.</p></body></html>"
)


def tiny_pdf() -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=72, height=72)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # body ends when the connection closes
    pdf = b""
    requests: dict[str, int] = {}  # requests seen per path (flaky, status)

    def log_message(self, format, *args):  # keep test output quiet
        pass

    def do_GET(self):
        parts = urlsplit(self.path)
        name = parts.path.strip("/").split("/")[0].replace("-", "_").replace(".", "_")
        route = getattr(self, "route_" + name, None)
        if route is None:
            self._send(404, b"not found", "text/plain")
            return
        route(parts.path, parse_qs(parts.query))

    def _send(self, status, body, content_type, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def route_page_html(self, path, query):
        self._send(200, PAGE_HTML, "text/html; charset=utf-8", {"ETag": '"v1"'})

    def route_paper_pdf(self, path, query):
        self._send(200, self.pdf, "application/octet-stream")

    def route_gzip_page(self, path, query):
        self._send(200, gzip.compress(PAGE_HTML), "text/html", {"Content-Encoding": "gzip"})

    def route_bomb(self, path, query):
        body = gzip.compress(b"\0" * (40 * MIB), compresslevel=9)
        self._send(200, body, "text/plain", {"Content-Encoding": "gzip"})

    def route_big(self, path, query):
        """50 MB streamed in 64 KiB chunks, never held in memory; no Content-Length."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if "declare" in query:
            self.send_header("Content-Length", str(50 * MIB))
        self.end_headers()
        chunk = b"x" * 65536
        try:
            for _ in range(50 * MIB // len(chunk)):
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up at its cap, as it should

    def route_redirect(self, path, query):
        status = int(query.get("status", ["302"])[0])
        self._send(status, b"", "text/plain", {"Location": query["to"][0]})

    def route_chain(self, path, query):
        left = int(path.rsplit("/", 1)[1])
        target = "/page.html" if left == 0 else f"/chain/{left - 1}"
        self._send(302, b"", "text/plain", {"Location": target})

    def route_loop(self, path, query):
        self._send(301, b"", "text/plain", {"Location": "/loop"})

    def _count(self, path):
        self.requests[path] = self.requests.get(path, 0) + 1
        return self.requests[path]

    def route_status(self, path, query):
        self._count(path)
        self._send(int(path.rsplit("/", 1)[1]), b"status page", "text/plain")

    def route_flaky(self, path, query):
        """503 for the first ``fail`` requests of this path, then the page."""
        if self._count(path) <= int(query.get("fail", ["1"])[0]):
            self._send(503, b"busy", "text/plain")
        else:
            self._send(200, PAGE_HTML, "text/html; charset=utf-8")

    def route_slow(self, path, query):
        time.sleep(float(query.get("s", ["2"])[0]))
        self._send(200, PAGE_HTML, "text/html")

    def route_drip(self, path, query):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        try:
            for _ in range(100):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass


class LocalServer:
    def __init__(self):
        _Handler.pdf = tiny_pdf()
        _Handler.requests = {}
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def handler(self):
        return _Handler

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def local_server():
    server = LocalServer()
    yield server
    server.close()


@pytest.fixture
def recorded():
    def load(name: str) -> bytes:
        return (RECORDED / name).read_bytes()

    return load
