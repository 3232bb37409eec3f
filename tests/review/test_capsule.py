from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import VerifierVote
from tests.factories import make_claim, make_passage, make_snapshot

HOSTILE = (
    "Intro text. <script>alert('owned')</script> The drug lowered blood pressure by 5 mmHg"
    ' <img src=x onerror="alert(1)"> in adults. Outro.'
)


@pytest.fixture
def hostile_claim(run):
    passage = make_passage(make_snapshot(HOSTILE, title="<b>Evil</b> title"))
    claim = make_claim(
        run,
        "The drug lowers blood pressure <script>x()</script>.",
        status="uncertain",
        passage=passage,
        quote="The drug lowered blood pressure by 5 mmHg",
        rationale='<img src=y onerror="alert(2)">',
    )
    VerifierVote.objects.create(
        claim=claim,
        evidence=claim.evidence.get(),
        verifier="rules",
        family="rules",
        verdict="supports",
        score=0.7,
        quote="<script>vote()</script>",
        rationale="onerror=alert(3)",
    )
    return claim


@pytest.mark.django_db
def test_it_highlights_the_quote_inside_its_passage(client, reviewer, hostile_claim):
    client.force_login(reviewer)
    html = client.get(hostile_claim.get_absolute_url()).content.decode()
    assert "<mark>The drug lowered blood pressure by 5 mmHg</mark>" in html
    assert "Intro text. &lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt; <mark>" in html
    link = hostile_claim.evidence.get()
    snapshot_url = reverse("review-show-snapshot", args=[hostile_claim.code, link.snapshot.code])
    assert f'{snapshot_url}?at={link.quote_start}#quote"' in html


@pytest.mark.django_db
def test_it_renders_hostile_evidence_inert(client, reviewer, hostile_claim):
    client.force_login(reviewer)
    pages = [
        client.get(hostile_claim.get_absolute_url()),
        client.get(reverse("review-show-ledger", args=[hostile_claim.run.code])),
        client.get(
            reverse(
                "review-show-snapshot",
                args=[hostile_claim.code, hostile_claim.evidence.get().snapshot.code],
            )
        ),
    ]
    for response in pages:
        html = response.content.decode()
        assert response.status_code == 200
        assert "<script>alert" not in html
        assert "<script>x()" not in html
        assert "<script>vote" not in html
        assert "<img src" not in html
        assert "<b>Evil" not in html
        assert 'onerror="' not in html
    capsule = pages[0].content.decode()
    assert "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt;" in capsule
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in capsule
    assert "&lt;b&gt;Evil&lt;/b&gt; title" in capsule


@pytest.mark.django_db
def test_it_shows_the_full_snapshot_with_the_quote_marked(client, reviewer, hostile_claim):
    link = hostile_claim.evidence.get()
    client.force_login(reviewer)
    url = reverse("review-show-snapshot", args=[hostile_claim.code, link.snapshot.code])
    html = client.get(url, {"at": link.quote_start}).content.decode()
    assert '<mark id="quote">The drug lowered blood pressure by 5 mmHg</mark>' in html
    assert "Outro." in html


@pytest.mark.django_db
def test_it_404s_a_snapshot_that_is_not_evidence_for_the_claim(client, reviewer, run, flagged):
    other = make_claim(run, "Unrelated claim.")
    client.force_login(reviewer)
    url = reverse(
        "review-show-snapshot", args=[flagged[0].code, other.evidence.get().snapshot.code]
    )
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_it_warns_when_a_quote_no_longer_matches_its_snapshot(client, reviewer, run):
    claim = make_claim(run, "Aspirin thins blood.")
    claim.evidence.update(quote="Aspirin thickens blood.")
    client.force_login(reviewer)
    html = client.get(claim.get_absolute_url()).content.decode()
    assert "no longer matches the stored quote" in html


@pytest.mark.django_db
def test_it_shows_pools_side_by_side_with_votes(client, reviewer, run, hostile_claim):
    refute = make_passage(make_snapshot("Another trial found no effect on blood pressure."))
    link = hostile_claim.evidence.create(
        passage=refute,
        snapshot=refute.snapshot,
        pool="refute",
        relation="contradicts",
        quote="found no effect on blood pressure",
        quote_start=14,
        quote_end=47,
        passage_fingerprint=refute.fingerprint,
    )
    assert refute.snapshot.text[link.quote_start : link.quote_end] == link.quote
    client.force_login(reviewer)
    response = client.get(hostile_claim.get_absolute_url())
    pools = response.context["pools"]
    assert [item.quote for item in pools["refute"]] == ["found no effect on blood pressure"]
    html = response.content.decode()
    assert 'id="pool-support"' in html and 'id="pool-refute"' in html
    assert "<mark>found no effect on blood pressure</mark>" in html
    assert "rules" in html and "onerror=alert(3)" in html


@pytest.mark.django_db
def test_it_shows_keyboard_shortcuts(client, reviewer, flagged):
    client.force_login(reviewer)
    html = client.get(flagged[1].get_absolute_url()).content.decode()
    for key in ("a", "n", "r", "j", "k", "e"):
        assert f'data-shortcut="{key}"' in html
        assert f"<kbd>{key}</kbd>" in html
    assert 'id="gate"' in html and "<progress" in html


@pytest.mark.django_db
def test_it_never_links_a_javascript_source_url(client, reviewer, hostile_claim):
    source = hostile_claim.evidence.get().snapshot.source
    source.url = "javascript:alert(document.cookie)"
    source.save(update_fields=["url"])
    client.force_login(reviewer)
    url = reverse("review-show-snapshot", args=[hostile_claim.code, source.snapshots.get().code])
    html = client.get(url).content.decode()
    assert 'href="javascript:' not in html
    assert "javascript:alert(document.cookie)" in html  # shown as text


@pytest.mark.django_db
def test_it_puts_a_contradicted_anchor_in_the_counter_evidence_column_with_the_votes_score(
    client, reviewer, run
):
    claim = make_claim(
        run, "Drug A lowers blood pressure.", status="uncertain", relation="possible-contradiction"
    )
    link = claim.evidence.get()
    assert (link.pool, link.is_anchor, link.score) == ("support", True, 0.9)
    link.score = 0.03  # the retrieval score, not the verifier's
    link.save(update_fields=["score"])
    for verifier, score, shadow in (("learned-minilm-lr", 0.77, False), ("nli:x", 0.99, True)):
        VerifierVote.objects.create(
            claim=claim,
            evidence=link,
            verifier=verifier,
            family=verifier.split("-")[0],
            verdict="contradicts",
            score=score,
            quote=link.quote,
            shadow=shadow,
        )
    client.force_login(reviewer)
    page = client.get(claim.get_absolute_url()).content.decode()
    support, refute = page.split('id="pool-support"')[1].split('id="pool-refute"')
    assert f'id="evidence-{link.pk}"' not in support
    card = refute.split(f'id="evidence-{link.pk}"')[1].split("</figure>")[0]
    assert "Possible contradiction (0.77, learned-minilm-lr)" in card  # not the shadow 0.99
    assert "anchor" in card and "retrieval 0.03" in card
    assert "shadow · not counted" in page


@pytest.mark.django_db
def test_it_renders_a_disabled_approve_button_as_disabled(client, reviewer, run):
    claim = make_claim(run, "Drug A lowers blood pressure.", status="pending")
    client.force_login(reviewer)
    page = client.get(claim.get_absolute_url()).content.decode()
    assert 'disabled aria-disabled="true"' in page
    css = client.get("/static/css/app.css")
    body = b"".join(css.streaming_content) if css.streaming else css.content
    assert b"button:disabled" in body and b"cursor: not-allowed" in body
