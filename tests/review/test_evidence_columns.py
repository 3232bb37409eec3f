"""Issue 26, item 4: a passage's column is what the counted votes found in it (its
relation), never the pool of the query that found it."""

from __future__ import annotations

import pytest

from ledger.models import VerifierVote
from tests.factories import link_evidence, make_claim, make_passage, make_snapshot


def _link(claim, text, quote, pool, relation):
    return link_evidence(
        claim, make_passage(make_snapshot(text)), quote, pool=pool, relation=relation
    )


def _columns(client, claim):
    page = client.get(claim.get_absolute_url()).content.decode()
    support, rest = page.split('id="pool-support"')[1].split('id="pool-refute"')
    refute, rest = (
        rest.split('id="pool-background"')
        if 'id="pool-background"' in rest
        else (
            rest,
            "",
        )
    )
    other = rest.split('id="counter-evidence"')[0]
    return support, refute, other


@pytest.mark.django_db
def test_it_lists_each_passage_under_the_vote_that_put_it_there(client, reviewer, run):
    claim = make_claim(run, "Drug A lowers blood pressure in adults.", status="uncertain")
    anchor = claim.evidence.get()
    insufficient = _link(
        claim,
        "Drug A was studied in a cohort of adults over ten years.",
        "Drug A was studied in a cohort of adults over ten years.",
        "support",
        "insufficient",
    )
    supportive = _link(
        claim,
        "Limitations aside, Drug A lowered blood pressure in adults in every arm.",
        "Drug A lowered blood pressure in adults in every arm.",
        "refute",
        "supports",
    )
    VerifierVote.objects.create(
        claim=claim, evidence=supportive, verifier="align-lr", family="align",
        verdict="supports", score=0.81, quote=supportive.quote,
    )  # fmt: skip
    contrary = _link(
        claim,
        "In a larger trial Drug A did not lower blood pressure in adults.",
        "Drug A did not lower blood pressure in adults.",
        "support",
        "possible-contradiction",
    )
    client.force_login(reviewer)
    support, refute, other = _columns(client, claim)

    def where(link):
        marker = f'id="evidence-{link.pk}"'
        return [name for name, html in (("support", support), ("refute", refute),
                ("other", other)) if marker in html]  # fmt: skip

    assert where(anchor) == ["support"]
    assert where(insufficient) == ["other"]  # not supporting: judged insufficient
    assert where(supportive) == ["support"]  # a refutation query found it; it supports
    assert where(contrary) == ["refute"]
    assert "Supports (0.81, align-lr)" in support
    assert "Other passages read (1)" in other
