from __future__ import annotations

from research.pipeline.claims import MineConfig, PassageInput, mine_claims, split_coordination
from research.pipeline.claims.classify import claim_type, entities, time_sensitivity
from research.pipeline.text import claim_fingerprint, passage_fingerprint


def passage(pid: str, text: str, source: str = "", offset: int = 0) -> PassageInput:
    return PassageInput(
        pid, text, passage_fingerprint(text), snapshot_start=offset, source_key=source or pid
    )


def test_it_splits_a_coordinated_sentence_and_anchors_each_claim_to_the_exact_quote():
    text = (
        "Background. Hybrid retrieval combines sparse and dense methods and is a strong "
        "default for technical research. More text."
    )
    result = mine_claims([passage("p1", text, offset=100)])
    texts = [c.text for c in result.claims]
    assert "Hybrid retrieval combines sparse and dense methods." in texts
    assert "Hybrid retrieval is a strong default for technical research." in texts
    for claim in result.claims:
        anchor = claim.anchors[0]
        assert text[anchor.start : anchor.end] == anchor.quote
        assert anchor.quote.startswith("Hybrid retrieval combines")
        assert anchor.snapshot_span == (100 + anchor.start, 100 + anchor.end)
        assert claim.fingerprint == claim_fingerprint(claim.text)


def test_it_splits_independent_clauses_but_not_lists_of_nouns():
    assert split_coordination(
        "BM25 was introduced in 1994, but dense retrieval became popular."
    ) == [
        "BM25 was introduced in 1994.",
        "Dense retrieval became popular.",
    ]
    assert split_coordination("Both mice and rats were treated with aspirin.") == [
        "Both mice and rats were treated with aspirin."
    ]
    # a second clause without a subject of its own stays with the first
    whole = (
        "Firstly, evidence suggests that, in primary prevention, statins substantially "
        "decrease CVD morbidity, but only moderately reduce CVD mortality."
    )
    assert split_coordination(whole) == [whole]


def test_it_merges_the_same_proposition_from_several_passages_into_one_claim():
    a = passage("p1", "Aspirin reduces fever in adults.", source="doi:1")
    b = passage("p2", "Results. We found that aspirin reduces fever in adults!", source="doi:2")
    result = mine_claims([a, b])
    same = [c for c in result.claims if "fever" in c.text]
    assert len(same) == 1
    assert {x.passage_id for x in same[0].anchors} == {"p1", "p2"}
    assert same[0].independent_keys == {"doi:1", "doi:2"}
    assert same[0].mentions == ["Aspirin reduces fever in adults!"]


def test_it_drops_questions_and_aims_with_a_reason():
    text = "Does aspirin reduce fever in adults? We aimed to test aspirin in adults with fever."
    result = mine_claims([passage("p1", text)])
    assert result.claims == []
    reasons = {d.reason for d in result.dropped}
    assert "a question, not a claim" in reasons
    assert "states the study's aim or question, not a finding (aim cue)" in reasons


def test_it_drops_claims_over_budget_with_a_reason():
    text = " ".join(f"Compound {i} reduces fever in adult patients." for i in range(1, 6))
    result = mine_claims([passage("p1", text)], MineConfig(max_claims=2))
    assert len(result.claims) == 2
    assert sum("claim budget" in d.reason for d in result.dropped) == 3


def test_it_types_claims_and_extracts_entities_numbers_and_time_sensitivity():
    assert claim_type("Dense retrieval outperforms BM25 on SciFact.") == "comparative"
    assert claim_type("The dose was 5 mg per day.") == "numerical"
    assert claim_type("Smoking causes lung cancer.") == "causal"
    assert claim_type("BM25 was introduced in 1994.") == "historical"
    assert claim_type("GPT-4 is currently the best model.") == "current-state"
    assert claim_type("Clinicians should avoid aspirin in children.") == "recommendation"
    assert "SciFact" in entities("Dense retrieval outperforms BM25 on SciFact.")
    assert "IL-18" in entities("Repressing IL-18 has effects on lesions.")
    assert (
        time_sensitivity("GPT-4 is currently the best model.", "current-state") == "current-state"
    )
    result = mine_claims([passage("p1", "Patients given 5 mg of drug daily had less fever.")])
    assert result.claims[0].numbers[0]["unit"] == "mg"


def test_it_reads_a_leading_demonstrative_as_the_only_before_a_noun_and_its_verb():
    from research.pipeline.claims.mine import clean_sentence

    assert clean_sentence("This interaction was confirmed in mice.") == (
        "The interaction was confirmed in mice."
    )
    assert clean_sentence("These mice showed less bone loss.") == "The mice showed less bone loss."
    # a pronoun: its verb is no noun ("The avoids the cost" was a claim in the CPython run)
    assert clean_sentence("This avoids the cost of locking.") == "This avoids the cost of locking."
    assert clean_sentence("This PEP proposes a new ABI.") == "This PEP proposes a new ABI."
