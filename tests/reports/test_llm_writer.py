"""An LLM writer behind a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from review import reports

UNSUPPORTED = "This proves that aspirin is safe for everyone"


class FakeOpenAI(BaseHTTPRequestHandler):
    """Restates each approved claim it is given, tagged, then adds one unsupported sentence."""

    requests: list[dict[str, Any]] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOpenAI.requests.append({"path": self.path, "body": body})
        user = body["messages"][-1]["content"]
        claims = re.findall(r"^\[(C\d+)\] (.+)$", user, flags=re.M)
        prose = " ".join(f"{text.rstrip('.')} [{label}]." for label, text in claims)
        prose += f" {UNSUPPORTED} [{claims[0][0]}]."
        reply = {"choices": [{"message": {"role": "assistant", "content": prose}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def llm_server(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeOpenAI.requests = []
    settings.LLM_BASE_URL = f"http://127.0.0.1:{server.server_port}/v1"
    settings.LLM_MODEL = "fake-writer"
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.django_db
def test_it_removes_and_records_an_unsupported_llm_sentence(llm_server, scene, run, author):
    report = reports.do_build_report(run, author)
    assert FakeOpenAI.requests[0]["path"] == "/v1/chat/completions"
    assert FakeOpenAI.requests[0]["body"]["model"] == "fake-writer"
    assert report.synthesizer.startswith("llm:fake-writer@http://127.0.0.1")
    removed = [f for f in report.check_findings if f["action"] == "removed"]
    assert [f["sentence"] for f in removed] == [f"{UNSUPPORTED}."]
    assert "broadened scope" in removed[0]["reason"]
    assert UNSUPPORTED not in report.markdown
    section = report.outline["sections"][0]
    assert section["mode"] == "llm"
    assert len(section["sentences"]) == 2
    assert report.outline["check"]["findings"][0]["action"] == "removed"


@pytest.mark.django_db
def test_it_never_sends_excluded_claims_to_the_llm(llm_server, scene, run, author):
    from tests.reports.conftest import WITHHELD

    reports.do_build_report(run, author)
    sent = json.dumps(FakeOpenAI.requests)
    for text in WITHHELD:
        assert text not in sent
