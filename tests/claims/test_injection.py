"""Regression: a contradiction injected into the corpus turns a PASS into FAIL/UNCERTAIN."""

from __future__ import annotations

import pytest

from ledger.models import Passage
from ledger.readers import evidence_item, passage_input
from ledger.services.claims import do_save_claims
from research.pipeline.claims import mine_claims
from research.pipeline.verify import default_config
from research.stages.verify import verify
from tests.factories import make_passage, make_plan, make_run, make_snapshot

pytestmark = pytest.mark.django_db

SUPPORT = (
    "Aspirin trial. In a randomized trial of 400 adults, aspirin reduced fever compared "
    "with placebo."
)
CONTRADICTION = (
    "Replication. In a second randomized trial of 900 adults, aspirin did not reduce fever "
    "compared with placebo."
)


def corpus_search(text, k):
    """A stand-in for retrieval: every stored passage sharing a key term with the query."""
    terms = [t for t in ("aspirin", "fever") if t in text.lower()]
    found = Passage.objects.select_related("source", "snapshot").order_by("pk")
    hits = [p for p in found if terms and all(t in p.text.lower() for t in terms)]
    return [evidence_item(p, "support") for p in hits[:k]]


def verified_status(author):
    run = make_run(make_plan(author), state="verifying")
    anchor = Passage.objects.order_by("pk")[0]
    claims = do_save_claims(run, mine_claims([passage_input(anchor)]))
    claim = next(c for c in claims if "fever" in c.text)
    verify(claim, default_config(), corpus_search)
    claim.refresh_from_db()
    return claim


def test_it_stops_passing_once_a_contradiction_enters_the_corpus(author, settings):
    settings.NLI_MODEL = "off"
    settings.LLM_BASE_URL = ""
    make_passage(make_snapshot(SUPPORT, title="Trial", canonical_id="doi:10/trial"))
    before = verified_status(author)
    assert before.status == "pass"

    make_passage(make_snapshot(CONTRADICTION, title="Replication", canonical_id="doi:10/rep"))
    after = verified_status(author)
    assert after.status in ("fail", "uncertain")
    refuting = after.evidence.get(passage__source__canonical_id="doi:10/rep")
    # FAIL needs a credible (calibrated) contradiction; anything weaker on the same subject
    # and outcome keeps the claim from passing, flagged, with the passage shown (issue 14).
    if after.status == "fail":
        assert refuting.relation == "contradicts"
    else:
        assert refuting.relation == "possible-contradiction"
        assert "possible-contradiction" in after.flags
        assert "blocks PASS" in after.rationale
    assert refuting.snapshot.text[refuting.quote_start : refuting.quote_end] == refuting.quote
