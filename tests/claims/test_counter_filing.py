"""A counter-evidence subquestion holds findings that state the question's null or opposite.

Issue 26: a finding that agrees with the question ("… reduced the incidence of hip
fractures") was filed under "What evidence contradicts or qualifies …?" because the
counter-evidence queries found it first. The miner now files it under the plan's evidence
subquestion and says so in the counter subquestion's record; so is a finding on the outcome about
another exposure ("physical inactivity increases …": its wording states nothing against the
question's intervention). A null or opposite finding stays.
"""

from __future__ import annotations

from research.pipeline.claims import MineConfig, PassageInput, RunInput, SubquestionInput, mine_run
from research.pipeline.text import passage_fingerprint

QUESTION = "Does exercise training reduce the risk of falls in older adults?"


def passage(pid: str, text: str) -> PassageInput:
    return PassageInput(
        pid, text, passage_fingerprint(text), source_key=f"doc:{pid}", title=f"Study {pid}"
    )


AGREES = passage(
    "1",
    "In a randomized controlled trial of 900 adults aged 70 years or older, exercise "
    "training reduced the risk of falls by 23%.",
)
NULL = passage(
    "2",
    "In a randomized trial of adults aged 65 years or older, exercise training did not "
    "reduce the risk of falls.",
)
OPPOSITE = passage(
    "3",
    "In frail nursing home residents aged 65 years or older, exercise training increased "
    "the risk of falls.",
)
INVERSE = passage(
    "4",
    "Physical inactivity increases the risk of falls in adults aged 65 years or older.",
)


def subquestions(counter: tuple[PassageInput, ...]) -> tuple[SubquestionInput, ...]:
    return (
        SubquestionInput(
            "s1",
            "What do studies report about whether exercise training reduces the risk of falls?",
            (),
            ("exercise training falls",),
            3,
            "evidence",
        ),
        SubquestionInput(
            "s2",
            "What evidence contradicts or qualifies the claim that exercise training reduces "
            "the risk of falls?",
            counter,
            ("exercise training does not reduce falls",),
            3,
            "counter-evidence",
        ),
    )


def filed(mining) -> dict[str, str]:
    return {
        claim.anchors[0].source_key: key
        for key, result in mining.results.items()
        for claim in result.claims
    }


def test_a_finding_that_agrees_is_filed_under_the_evidence_subquestion_and_says_why():
    mining = mine_run(
        RunInput(QUESTION, subquestions((AGREES, NULL, OPPOSITE, INVERSE))),
        MineConfig(max_run_claims=10),
    )
    where = filed(mining)
    assert where["doc:1"] == "s1"  # agrees: not counter-evidence
    assert where["doc:2"] == "s2"  # states no effect: counter-evidence
    assert where["doc:3"] == "s2"  # a harm on another outcome qualifies the claim
    moved = [
        m for m in mining.results["s2"].merged if "kept as a claim of subquestion s1" in m.reason
    ]
    assert [m.anchor.source_key for m in moved] == ["doc:1"]
    assert "not counter-evidence" in moved[0].reason


def test_without_an_evidence_subquestion_or_an_asked_direction_nothing_moves():
    alone = subquestions((AGREES,))[1:]
    mining = mine_run(RunInput(QUESTION, alone), MineConfig(max_run_claims=10))
    assert filed(mining) == {"doc:1": "s2"}
    topic = RunInput(
        "How is exercise training for older adults organised?", subquestions((AGREES,))
    )
    assert filed(mine_run(topic, MineConfig(max_run_claims=10))) == {"doc:1": "s2"}
