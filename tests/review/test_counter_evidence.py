"""The capsule page says what the counter-evidence stage searched for the claim."""

from __future__ import annotations

import pytest

from tests.factories import make_claim

HOSTILE_QUERY = "<script>alert('q')</script> drug A does not lower blood pressure"


def _capsule(client, user, claim):
    client.force_login(user)
    response = client.get(claim.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def _section(html):
    start = html.index('id="counter-evidence"')
    return html[start : html.index("</section>", start)]


@pytest.mark.django_db
def test_it_lists_the_queries_and_pool_sizes_escaped(client, reviewer, run):
    claim = make_claim(run, "Drug A lowers blood pressure in adults.", status="uncertain")
    claim.counter_evidence = {
        "queries": [
            {
                "text": "drug A lowers blood pressure",
                "intent": "support",
                "pool": "support",
                "found": 3,
            },
            {"text": HOSTILE_QUERY, "intent": "negation", "pool": "refute", "found": 2},
            {
                "text": "drug A replication trial",
                "intent": "replication",
                "pool": "refute",
                "found": 0,
            },
        ],
        "pools": {"support": [[1, 0.9], [2, 0.5]], "refute": [[3, 0.4]], "background": []},
    }
    claim.save(update_fields=["counter_evidence"])
    html = _capsule(client, reviewer, claim)
    section = _section(html)
    assert "Counter-evidence searched" in section
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;q&#x27;)&lt;/script&gt; drug A does not lower" in section
    for intent in ("support", "negation", "replication"):
        assert f"<td>{intent}</td>" in section
    assert '<td class="num">2</td>' in section and '<td class="num">0</td>' in section
    assert "support 2" in section and "refute 1" in section and "background 0" in section


@pytest.mark.django_db
def test_it_says_why_counter_evidence_was_unavailable(client, reviewer, run):
    claim = make_claim(run, "Drug A is taken once daily.")
    claim.counter_evidence = {
        "unavailable": "retrieval unavailable; judged on its anchor <b>passages</b> only",
        "queries": [],
        "pools": {},
    }
    claim.save(update_fields=["counter_evidence"])
    section = _section(_capsule(client, reviewer, claim))
    assert "Not gathered: retrieval unavailable; judged on its anchor" in section
    assert "&lt;b&gt;passages&lt;/b&gt;" in section
    assert 'id="counter-queries"' not in section


@pytest.mark.django_db
def test_it_says_when_counter_evidence_was_not_gathered_yet(client, researcher, run):
    claim = make_claim(run, "Drug A was approved in 2001.")
    section = _section(_capsule(client, researcher, claim))
    assert "Not gathered yet" in section


@pytest.mark.django_db
def test_it_survives_a_malformed_record(client, reviewer, run):
    claim = make_claim(run, "Drug A was approved in 2002.")
    claim.counter_evidence = {"queries": ["not a dict", {"text": "ok query"}], "pools": None}
    claim.save(update_fields=["counter_evidence"])
    section = _section(_capsule(client, reviewer, claim))
    assert "ok query" in section and "support 0" in section
