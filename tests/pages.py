"""A local web server's request handler for tests that fetch pages over real HTTP."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


class PageHandler(BaseHTTPRequestHandler):
    """Answers with :meth:`send_page`; logs nothing (the test output stays readable)."""

    def send_page(self, status: int, content_type: str, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        return None
