from __future__ import annotations

from dataclasses import replace

from research.pipeline.verify import admission
from research.pipeline.verify.admission import admit_evidence, admit_votes
from research.pipeline.verify.records import ClaimInput

from .helpers import SUPPORT_QUOTE, SUPPORT_TEXT, item, vote

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")
EV = item("e1", SUPPORT_TEXT)


def reasons(votes):
    admitted, discarded = admit_votes(CLAIM, [EV], votes)
    return admitted, [d.reason for d in discarded]


def test_it_admits_a_vote_bound_to_the_pair_with_a_verbatim_quote():
    admitted, discarded = reasons([vote(CLAIM, EV, "supports", SUPPORT_QUOTE)])
    assert len(admitted) == 1
    assert discarded == []


def test_it_discards_a_vote_for_an_invented_evidence_id():
    invented = replace(vote(CLAIM, EV, "supports", SUPPORT_QUOTE), evidence_id="e999")
    assert reasons([invented]) == ([], [admission.INVENTED_EVIDENCE])


def test_it_discards_a_paraphrased_verbatim_quote():
    paraphrase = "A randomized trial in 400 adults showed aspirin significantly lowers fever."
    assert reasons([vote(CLAIM, EV, "supports", paraphrase)]) == ([], [admission.FABRICATED_QUOTE])


def test_it_discards_a_one_word_quote():
    assert reasons([vote(CLAIM, EV, "supports", "aspirin")]) == ([], [admission.SHORT_QUOTE])


def test_it_discards_a_vote_against_an_older_claim_text():
    older = ClaimInput("c1", "Aspirin cures fever in everyone.")
    stale = vote(older, EV, "supports", SUPPORT_QUOTE)
    assert reasons([stale]) == ([], [admission.STALE_CLAIM])


def test_it_discards_a_vote_on_an_older_passage_text():
    old = item("e1", SUPPORT_TEXT + " Later edited.")
    stale = vote(CLAIM, old, "supports", SUPPORT_QUOTE)
    assert reasons([stale]) == ([], [admission.STALE_EVIDENCE])


def test_it_counts_only_the_first_vote_of_a_verifier_on_a_pair():
    first = vote(CLAIM, EV, "supports", SUPPORT_QUOTE)
    second = vote(CLAIM, EV, "contradicts", SUPPORT_QUOTE)
    admitted, why = reasons([first, second])
    assert admitted == [first]
    assert why == [admission.DUPLICATE]


def test_it_discards_decisive_votes_without_quotes_and_bad_scores():
    no_quote = vote(CLAIM, EV, "contradicts", "")
    bad_score = vote(CLAIM, EV, "supports", SUPPORT_QUOTE, score=1.7, verifier="other")
    bad_verdict = vote(CLAIM, EV, "maybe", SUPPORT_QUOTE, verifier="third")
    assert reasons([no_quote, bad_score, bad_verdict])[1] == [
        admission.MISSING_QUOTE,
        admission.BAD_SCORE,
        admission.BAD_VERDICT,
    ]


def test_it_rejects_evidence_whose_cited_quote_is_not_in_the_passage():
    cited = replace(EV, cited_quote="Aspirin cured fever in every adult patient.")
    changed = replace(item("e2", SUPPORT_TEXT), text=SUPPORT_TEXT + " Edited.")
    admitted, rejected = admit_evidence([cited, changed, item("e3", SUPPORT_TEXT)])
    assert [i.evidence_id for i in admitted] == ["e3"]
    assert [r.reason for r in rejected] == [
        admission.CITED_QUOTE_MISSING,
        admission.PASSAGE_CHANGED,
    ]
