from __future__ import annotations

from dataclasses import replace

import pytest

from ledger.models import Candidate, Claim, EvidenceLink, Passage, VerifierVote
from ledger.readers import context_items, evidence_item, ledger_gaps, passage_input
from ledger.services.claims import do_save_claims
from ledger.services.counter_evidence import do_save_counter_evidence
from research.models import Subquestion
from research.pipeline.claims import mine_claims
from research.pipeline.claims.records import DroppedCandidate
from research.pipeline.counter import CounterRecord
from research.pipeline.retrieve.records import EvidencePools, Hit
from research.pipeline.verify import VerifyConfig
from research.pipeline.verify.records import Vote
from research.stages.counter import gather
from research.stages.mine import mine_subquestion
from research.stages.verify import verify
from review.services.reverify import reverify_claim_text
from tests.factories import make_passage, make_plan, make_run, make_snapshot

pytestmark = pytest.mark.django_db

SUPPORT = (
    "Aspirin trial. In a randomized trial of 400 adults, aspirin reduces fever and relieves "
    "headache. Adverse events were rare."
)
REFUTE = "Replication. In a second trial of 900 adults, aspirin did not reduce fever at all."


class ScriptedVerifier:
    """Votes like a verifier would, plus the kinds of votes admission must discard."""

    name = "scripted"
    family = "learned"

    def judge(self, claim, items):
        votes = []
        for it in items:
            sentence = next(s for s in it.text.split(". ") if "fever" in s)
            quote = sentence if sentence.endswith(".") else sentence + "."
            verdict = "contradicts" if "did not" in it.text else "supports"
            votes.append(self._vote(claim, it, verdict, quote))
        first = items[0]
        votes.append(replace(self._vote(claim, first, "supports", "x"), evidence_id="99999"))
        votes.append(self._vote(claim, first, "supports", "Aspirin cures every fever."))
        return votes

    def _vote(self, claim, it, verdict, quote):
        return Vote(
            verifier=self.name,
            family=self.family,
            claim_id=claim.claim_id,
            evidence_id=it.evidence_id,
            verdict=verdict,
            score=0.9,
            claim_fingerprint=claim.fingerprint,
            evidence_fingerprint=it.fingerprint,
            quote=quote,
        )


@pytest.fixture
def run(author):
    return make_run(make_plan(author), state="mining")


@pytest.fixture
def support_passage():
    snapshot = make_snapshot("Header line.\n\n" + SUPPORT, title="Aspirin trial")
    return make_passage(snapshot, start=len("Header line.\n\n"))


@pytest.fixture
def refute_passage():
    return make_passage(make_snapshot(REFUTE, title="Replication", canonical_id="doi:10/x"))


CONFIG = VerifyConfig(verifiers=(ScriptedVerifier(),))


def mined(run, passage):
    return do_save_claims(run, mine_claims([passage_input(passage)]))


def test_it_saves_atomic_claims_with_anchor_quotes_exact_in_the_snapshot(run, support_passage):
    claims = mined(run, support_passage)
    texts = {c.text for c in claims}
    assert "In a randomized trial of 400 adults, aspirin reduces fever." in texts
    assert "In a randomized trial of 400 adults, aspirin relieves headache." in texts
    for link in EvidenceLink.objects.filter(claim__run=run, is_anchor=True):
        assert link.snapshot.text[link.quote_start : link.quote_end] == link.quote
        assert len(link.quote) >= 20
    kept = [c for c in claims if c.disposition == "pending"]
    assert all(c.dispositions.filter(stage="mining").exists() for c in kept)


def test_it_is_idempotent_when_a_stage_saves_the_same_claims_twice(run, support_passage):
    mined(run, support_passage)
    before = (Claim.objects.count(), EvidenceLink.objects.count())
    mined(run, support_passage)
    assert (Claim.objects.count(), EvidenceLink.objects.count()) == before


def test_it_records_a_draft_whose_anchor_no_longer_matches_as_a_dropped_candidate(
    run, support_passage
):
    result = mine_claims([passage_input(support_passage)])
    draft = result.claims[0]
    draft.anchors = [replace(a, start=a.start + 3, end=a.end + 3) for a in draft.anchors]
    assert do_save_claims(run, replace(result, claims=[draft], dropped=[])) == []
    assert not Claim.objects.filter(run=run).exists()
    candidate = Candidate.objects.get(run=run)
    assert (candidate.state, candidate.text, candidate.claim) == ("dropped", draft.text, None)
    assert "no longer matches the snapshot" in candidate.reason
    assert candidate.quote == "" and candidate.passage is None


def test_it_records_dropped_candidates_with_their_reason_and_no_claim(run):
    passage = make_passage(
        make_snapshot("Is aspirin safe for adults with fever? We aimed to test it in adults.")
    )
    assert mined(run, passage) == []
    assert not Claim.objects.filter(run=run).exists()
    dropped = Candidate.objects.filter(run=run)
    assert {c.state for c in dropped} == {"dropped"}
    assert {c.reason for c in dropped} >= {"a question, not a claim"}
    for candidate in dropped:
        assert candidate.snapshot is not None
        assert candidate.snapshot.text[candidate.quote_start : candidate.quote_end] == (
            candidate.quote
        )


def test_it_accounts_for_every_candidate_as_kept_merged_or_dropped(run, support_passage):
    result = mine_claims([passage_input(support_passage)])
    result.claims[0].mentions.append("Aspirin, in a randomized trial of 400 adults, reduces fever.")
    claims = do_save_claims(run, result)
    candidates = Candidate.objects.filter(run=run)
    kept = candidates.filter(state="kept")
    assert sorted(c.claim_id or 0 for c in kept) == sorted(c.pk for c in claims)
    merged = candidates.get(state="merged")
    assert merged.claim == claims[0] and "another wording" in merged.reason
    assert candidates.filter(state="dropped").count() == len(result.dropped)
    assert all(c.reason for c in candidates)
    do_save_claims(run, result)
    assert Candidate.objects.filter(run=run).count() == candidates.count()


def test_it_merges_a_proposition_mined_again_under_another_subquestion(run, support_passage):
    first = Subquestion.objects.get(plan_version=run.plan_version, key="sq1")
    second = Subquestion.objects.create(plan_version=run.plan_version, key="sq2", text="Y?")
    do_save_claims(run, mine_claims([passage_input(support_passage)]), first)
    claims = Claim.objects.filter(run=run).count()
    do_save_claims(run, mine_claims([passage_input(support_passage)]), second)
    assert Claim.objects.filter(run=run).count() == claims
    again = Candidate.objects.filter(run=run, subquestion=second)
    assert {c.state for c in again if c.claim_id} == {"merged"}
    assert all(c.claim.subquestion == first for c in again if c.claim is not None)


def test_it_saves_support_and_refutation_queries_and_their_pools(
    run, support_passage, refute_passage
):
    claim = next(c for c in mined(run, support_passage) if "fever" in c.text)
    asked: list[str] = []

    def retrieve(text, k):
        asked.append(text)
        return [evidence_item(refute_passage, "support")] if "limitations" in text else []

    record = gather(claim, retrieve)
    claim.refresh_from_db()
    assert claim.counter_evidence == record.to_json()
    assert CounterRecord.from_json(claim.counter_evidence) == record
    intents = {q.intent for q in record.queries}
    assert intents == {"support", "negation", "limitation", "failure", "replication", "comparison"}
    assert [q.text for q in record.queries] == asked
    assert [p.passage_id for p in record.refute] == [refute_passage.pk]
    anchors = set(claim.evidence.filter(is_anchor=True).values_list("passage_id", flat=True))
    assert {p.passage_id for p in record.support} == anchors


def test_it_verifies_against_the_pools_the_counter_stage_saved(
    run, support_passage, refute_passage
):
    claim = next(c for c in mined(run, support_passage) if "fever" in c.text)
    gather(claim, lambda text, k: [evidence_item(refute_passage, "support")])

    def no_retrieval(text, k):
        raise AssertionError("verification must not search again")

    verify(claim, CONFIG, no_retrieval)
    claim.refresh_from_db()
    assert claim.status == "fail"
    assert claim.evidence.get(passage=refute_passage).pool == "refute"


def test_it_says_when_a_claim_was_judged_without_counter_evidence(run, support_passage):
    claim = mined(run, support_passage)[0]
    why = "retrieval unavailable; judged on its anchor passages only"
    do_save_counter_evidence(claim, CounterRecord(unavailable=why))
    verify(claim, CONFIG)
    claim.refresh_from_db()
    assert claim.status != "pending"
    assert "counter-evidence: retrieval unavailable" in claim.rationale


def test_it_records_votes_links_verdict_and_disposition(run, support_passage, refute_passage):
    claim = next(c for c in mined(run, support_passage) if "fever" in c.text)
    retrieve = lambda text, k: [evidence_item(refute_passage, "support")]  # noqa: E731
    verdict = verify(claim, CONFIG, retrieve)
    claim.refresh_from_db()
    assert verdict is not None and claim.status == "fail"
    assert claim.disposition == "kept"
    assert claim.dispositions.filter(state="kept", stage="verifying").exists()
    assert "contradict" in claim.rationale and "Discarded, not counted" in claim.rationale
    refute = claim.evidence.get(passage=refute_passage)
    assert (refute.pool, refute.relation) == ("refute", "contradicts")
    for link in claim.evidence.all():
        assert link.snapshot.text[link.quote_start : link.quote_end] == link.quote
    valid = VerifierVote.objects.filter(claim=claim, valid=True)
    assert {v.verdict for v in valid} == {"supports", "contradicts"}
    discarded = VerifierVote.objects.filter(claim=claim, valid=False)
    assert {v.discard_reason for v in discarded} == {"invented evidence id"}
    run.refresh_from_db()
    counts = run.counters["verification"]
    assert counts["discarded"] == 2 and counts["fail"] == 1
    assert counts["discard_reasons"] == {
        "invented evidence id": 1,
        "quote not verbatim in the passage": 1,
    }


def test_it_skips_a_claim_already_decided(run, support_passage):
    claim = mined(run, support_passage)[0]
    verify(claim, CONFIG, lambda text, k: [])
    votes = VerifierVote.objects.count()
    assert verify(claim, CONFIG, lambda text, k: []) is None
    assert VerifierVote.objects.count() == votes


def test_it_reverifies_a_narrowed_text_without_writing(run, support_passage):
    claim = mined(run, support_passage)[0]
    verify(claim, CONFIG, lambda text, k: [])
    before = (VerifierVote.objects.count(), EvidenceLink.objects.count())
    verdict = reverify_claim_text(claim, "Aspirin reduces fever in some adults.", CONFIG)
    assert verdict.status in ("pass", "fail", "uncertain")
    assert verdict.claim_fingerprint != claim.fingerprint
    assert (VerifierVote.objects.count(), EvidenceLink.objects.count()) == before


def test_it_mines_a_subquestion_from_the_retrieve_stage_pools(author, support_passage, settings):
    settings.LLM_BASE_URL = ""
    run = make_run(make_plan(author, "Does aspirin reduce fever in adults?"), state="mining")
    pools = {"support": [{"passage_id": support_passage.pk, "source_id": 1, "score": 0.5}]}
    kept = mine_subquestion(run, "sq1", EvidencePools.from_json(pools))
    assert "In a randomized trial of 400 adults, aspirin reduces fever." in {c.text for c in kept}
    headache = Candidate.objects.get(run=run, text__contains="relieves headache")
    assert headache.state == "kept" or headache.reason.startswith("off-topic")
    assert set(Claim.objects.filter(run=run).values_list("subquestion__key", flat=True)) == {"sq1"}
    fever = Claim.objects.get(run=run, text__contains="reduces fever")
    assert fever.relevance is not None and fever.rank is not None
    assert fever.study_design == "rct" and fever.direction == "decreases"
    assert not Candidate.objects.filter(run=run, reason="").exists()


def test_it_judges_a_retrieved_chunk_in_its_parent_section(support_passage):
    snapshot = support_passage.snapshot
    section = make_passage(snapshot, start=0)
    Passage.objects.filter(pk=support_passage.pk).update(parent=section)
    hits = [Hit(passage_id=support_passage.pk, score=0.5)] * 2
    [got] = context_items(hits)
    assert got.passage_id == str(section.pk)
    assert got.text == snapshot.text


def test_it_counts_the_parts_a_claim_lacks(run, support_passage):
    claims = mined(run, support_passage)
    gaps = ledger_gaps(run)
    assert gaps["without_votes"] == gaps["without_verdict"] == len(claims)
    assert gaps["without_counter_evidence"] == len(claims) and gaps["without_quote"] == 0
    for claim in claims:
        verify(claim, CONFIG, lambda text, k: [])
    assert not any(ledger_gaps(run).values())
    VerifierVote.objects.filter(claim=claims[0]).update(valid=False)
    assert ledger_gaps(run)["without_votes"] == 1


def test_it_merges_a_candidate_over_budget_that_another_subquestion_kept(run, support_passage):
    first = Subquestion.objects.get(plan_version=run.plan_version, key="sq1")
    second = Subquestion.objects.create(plan_version=run.plan_version, key="sq2", text="Y?")
    other = make_passage(make_snapshot(SUPPORT, title="Mirror", canonical_id="doi:10/mirror"))
    [kept] = do_save_claims(run, mine_claims([passage_input(support_passage)]), first)[:1]
    again = mine_claims([passage_input(other)])
    draft = next(d for d in again.claims if d.fingerprint == kept.fingerprint)
    over = DroppedCandidate(draft.text, "over the claim budget of 25", draft.anchors[0])
    do_save_claims(run, replace(again, claims=[], dropped=[over]), second)
    candidate = Candidate.objects.get(run=run, subquestion=second)
    assert (candidate.state, candidate.claim) == ("merged", kept)
    assert candidate.reason.startswith("over the claim budget of 25; already a claim")
    anchors = kept.evidence.filter(is_anchor=True)
    assert set(anchors.values_list("passage_id", flat=True)) == {support_passage.pk, other.pk}
