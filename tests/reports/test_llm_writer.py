"""An LLM writer behind a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest

from reports.build import do_build_report
from tests.fake_openai import Seen, fake_openai

UNSUPPORTED = "This proves that aspirin is safe for everyone"


def supports(request: Seen) -> str:
    """As an LLM judge (configured with the writer: the semantic check asks it about every
    sentence the entailment model entails): "supports", quoting the first passage."""
    evidence_id, passage = re.findall(r"^\[([^\]]+)\]\n(.+)$", request.prompt, re.M)[0]
    vote = {"evidence_id": evidence_id, "verdict": "supports", "quote": passage,
            "confidence": 0.9, "rationale": "it states it"}  # fmt: skip
    return json.dumps({"votes": [vote]})


def restates(request: Seen) -> str:
    """Restates each approved claim it is given, tagged, then adds one unsupported sentence."""
    if request.prompt.startswith("Claim:"):
        return supports(request)
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


MIXED = "The policy raised tax revenue but lowered employment."
PARAPHRASE = "In adults, aspirin reduces the risk of a second heart attack"
OPPOSITE = "The policy lowered tax revenue"  # every word is the claim's own


def paraphrases(request: Seen) -> str:
    """As the writer: a supported paraphrase of the aspirin claim, and a sentence the
    policy claim does not support although the lexical check finds nothing in it to object
    to. As the judge (an LLM is configured, so it judges what the model entails too):
    "supports", quoting the passage."""
    if request.prompt.startswith("Claim:"):
        return supports(request)
    labels = {text: label for label, text in re.findall(r"^\[(C\d+)\] (.+)$", request.prompt, re.M)}
    aspirin = next(label for text, label in labels.items() if text.startswith("Aspirin"))
    return f"{PARAPHRASE} [{aspirin}]. {OPPOSITE} [{labels[MIXED]}]."


@pytest.mark.django_db
def test_the_semantic_check_refuses_and_names_what_no_cited_claim_entails(
    settings, run, sub, reviewer, author, client
):
    from review.services.decisions import do_approve_claim
    from tests.reports.conftest import APPROVED, claim_from_source

    for text, title in ((APPROVED[0], "Aspirin trial"), (MIXED, "Tax study")):
        claim = claim_from_source(run, text, title=title, sub=sub)
        do_approve_claim(reviewer, claim, claim.version)
    with fake_openai(paraphrases) as fake:
        settings.LLM_BASE_URL, settings.LLM_MODEL = fake.url, "fake-writer"
        report = do_build_report(run, author)

    refused = [f for f in report.check_findings if f["action"] == "refused"]
    assert [f["sentence"] for f in refused] == [f"{OPPOSITE}."]
    assert not [f for f in report.check_findings if f["action"] == "removed"]
    prose = [s["text"] for s in report.outline["sections"][0]["sentences"]]
    assert prose == [f"{PARAPHRASE}.", MIXED]  # the paraphrase as written; the claim as approved
    assert OPPOSITE not in report.markdown
    method = " ".join(report.outline["appendix_d"]["method"])
    assert (
        "Semantic check of the report's sentences (nli:shipped and llm, entailment ≥ 0.85" in method
    )
    assert "3 judged; 1 entailed, 1 the approved text itself, 1 refused and removed" in method
    client.force_login(author)
    page = client.get(report.get_absolute_url()).content.decode()
    assert f"<q>{OPPOSITE}.</q> — refused: no cited claim entails proposition 1 of 1" in page
    judged = [seen for seen in fake.requests if seen.prompt.startswith("Claim:")]
    assert [seen.prompt.splitlines()[0] for seen in judged] == [f"Claim: {PARAPHRASE}."]
