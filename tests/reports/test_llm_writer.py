"""An LLM writer behind a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest

from reports.build import do_build_report
from tests.fake_openai import Seen, fake_openai

UNSUPPORTED = "This proves that aspirin is safe for everyone"


def restates(request: Seen) -> str:
    """Restates each approved claim it is given, tagged, then adds one unsupported sentence."""
    claims = re.findall(r"^\[(C\d+)\] (.+)$", request.prompt, flags=re.M)
    prose = " ".join(f"{text.rstrip('.')} [{label}]." for label, text in claims)
    return prose + f" {UNSUPPORTED} [{claims[0][0]}]."


@pytest.fixture
def llm_server(settings):
    with fake_openai(restates) as fake:
        settings.LLM_BASE_URL = fake.url
        settings.LLM_MODEL = "fake-writer"
        yield fake


@pytest.mark.django_db
def test_it_removes_and_records_an_unsupported_llm_sentence(llm_server, scene, run, author):
    report = do_build_report(run, author)
    assert llm_server.requests[0].path == "/v1/chat/completions"
    assert llm_server.requests[0].body["model"] == "fake-writer"
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

    do_build_report(run, author)
    sent = json.dumps([seen.body for seen in llm_server.requests])
    for text in WITHHELD:
        assert text not in sent
