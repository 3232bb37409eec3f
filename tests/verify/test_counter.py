from __future__ import annotations

import json

from research.pipeline.counter import (
    CounterRecord,
    PooledPassage,
    SearchedQuery,
    claim_relevance,
    counter_queries,
    gather_counter_evidence,
    gather_pools,
    negate,
    topic,
)
from research.pipeline.verify.records import PoolName

from .helpers import item


def test_it_writes_support_and_every_kind_of_refutation_query():
    queries = counter_queries("Aspirin reduces fever in adults.", "empirical")
    intents = {q.intent: q for q in queries}
    assert set(intents) == {
        "support",
        "negation",
        "limitation",
        "failure",
        "replication",
        "comparison",
    }
    assert intents["negation"].text == "Aspirin increases fever in adults"
    assert all(q.pool == PoolName.REFUTE for q in queries if q.intent != "support")


def test_it_negates_by_dropping_a_negation_or_inserting_one():
    assert negate("Aspirin does not reduce fever.") == "Aspirin does reduce fever"
    assert negate("The sky is blue.") == "The sky is not blue"


def test_it_pools_refutation_hits_apart_and_keeps_anchors_in_support():
    anchor = item("a", "Anchor passage. Aspirin reduces fever in adults.")
    both = item("b", "A passage both kinds of query find about aspirin and fever.")
    refuting = item("c", "Aspirin did not reduce fever in a large trial of adults.")
    found = {"support": [anchor, both], "refute": [both, refuting, anchor]}

    def retrieve(text: str, k: int):
        return found[
            "refute" if "limitations" in text or "not" in text or "increases" in text else "support"
        ][:k]

    pools = gather_pools(counter_queries("Aspirin reduces fever."), retrieve, anchors=[anchor])
    assert [i.evidence_id for i in pools.support] == ["a"]
    assert [i.evidence_id for i in pools.refute] == ["b", "c"]
    assert all(i.pool == PoolName.REFUTE for i in pools.refute)


def test_its_key_terms_skip_letter_entities_and_keep_words_that_merely_contain_them():
    text = "Group A streptococci raise serum IgA titres in EU children."
    key = topic(text, ["A", "IgA", "EU", "p53"])
    assert key.split()[:3] == ["IgA", "EU", "p53"]
    assert "A" not in key.split()
    assert {"group", "streptococci", "serum"} <= set(key.lower().split())


def test_it_saves_and_reads_back_the_counter_record_as_the_column_stores_it():
    record = CounterRecord(
        queries=(SearchedQuery("Aspirin reduces fever.", "support", "support", 2),),
        support=(PooledPassage(7, 0.5),),
        refute=(PooledPassage(9, 0.25),),
    )
    stored = record.to_json()
    assert stored == {
        "queries": [
            {
                "text": "Aspirin reduces fever.",
                "intent": "support",
                "pool": "support",
                "found": 2,
                "off_topic": 0,
            }
        ],
        "pools": {"support": [[7, 0.5]], "refute": [[9, 0.25]], "background": []},
    }
    assert CounterRecord.from_json(json.loads(json.dumps(stored))) == record


def test_it_reads_an_empty_column_as_not_gathered_and_a_malformed_one_leniently():
    assert CounterRecord.from_json({}) is None
    assert CounterRecord.from_json(None) is None
    record = CounterRecord.from_json(
        {"queries": ["not a dict", {"text": "ok query"}], "pools": {"refute": [[3, 0.4], "x"]}}
    )
    assert record is not None
    assert record.queries == (SearchedQuery("ok query", "", "", 0),)
    assert record.refute == (PooledPassage(3, 0.4),) and record.support == ()
    why = CounterRecord(unavailable="retrieval unavailable")
    assert CounterRecord.from_json(why.to_json()) == why


def test_it_keeps_a_refutation_pool_about_the_claim():
    """Generic counter-query words ("replication", "failure") must not pad the refute pool
    with unrelated papers: a passage that shares none of the claim's words is set aside."""
    claim = "Vitamin D supplementation reduces hip fractures in older women."
    on_topic = item(
        "1", "Vitamin D did not reduce hip fractures in older women in a trial.", passage_id="1"
    )
    primase = item(
        "2", "DNA primase initiates replication of the lagging strand in yeast.", passage_id="2"
    )
    starch = item("3", "Hydroxyethyl starch failed to improve survival in sepsis.", passage_id="3")

    def retrieve(text: str, k: int):
        return [on_topic, primase, starch][:k]

    record = gather_counter_evidence(
        claim, "causal", [], retrieve, k=3, about=claim_relevance(None, {})
    )
    assert [p.passage_id for p in record.refute] == [1]
    pooled = {q.intent: (q.found, q.off_topic) for q in record.queries}
    assert pooled["replication"] == (1, 2) and pooled["failure"] == (1, 2)
