"""The off-topic claims of the vitamin D ledger before this miner are dropped as off-topic.

Sentences and source titles are the ones the SciFact vitamin D run kept as claims before
findings-only mining (``docs/bench/vitamin-d-claims.md``: statins, benzodiazepines,
humerus surgery, alendronate). Each is mined under the plan's question and its first
subquestion with the real sentence encoder; every one must be dropped with a reason that
starts "off-topic (relevance x".
"""

from __future__ import annotations

import pytest

from research.pipeline.claims import PassageInput, RunInput, SubquestionInput, mine_run
from research.pipeline.claims.scope import parse_scope
from research.pipeline.text import passage_fingerprint
from research.providers.embedder import Embedder

QUESTION = "Does vitamin D supplementation reduce the risk of fractures or falls in older adults?"
SUBQUESTION = (
    "What do studies report about whether vitamin D supplementation reduces the risk of "
    "fractures or falls in older adults?"
)
STATINS = "HMG-CoA reductase inhibitors and the risk of hip fractures in elderly patients."
BENZO = "Benzodiazepines and injurious falls in community dwelling elders."
HUMERUS = (
    "Surgical vs nonsurgical treatment of adults with displaced fractures of the proximal "
    "humerus: the PROFHER randomized clinical trial."
)
BEFORE = [
    (
        STATINS,
        "Whether statin use in humans results in clinically meaningful bone formation or a "
        "reduction in the risk of osteoporotic fractures is not known.",
    ),
    (
        STATINS,
        "Recent animal studies have found that 3-hydroxy-3-methylglutaryl coenzyme A (HMG-CoA) "
        "lipid-lowering drugs (statins) substantially increase bone formation.",
    ),
    (
        BENZO,
        "Benzodiazepines are frequently used medications in the elderly, in whom they are "
        "associated with an increased risk of falling, with sometimes dire consequences.",
    ),
    (
        BENZO,
        "Benzodiazepine exposure was the use of benzodiazepines over the previous 2 weeks "
        "reported at the follow-up visit preceding the fall.",
    ),
    (
        HUMERUS,
        "The need for surgery for the majority of patients with displaced proximal humeral "
        "fractures is unclear.",
    ),
    (
        HUMERUS,
        "DESIGN, SETTING, AND PARTICIPANTS A pragmatic, multicenter, parallel-group, "
        "randomized clinical trial, the Proximal Fracture of the Humerus Evaluation by "
        "Randomization (PROFHER) trial, recruited 250 patients aged 16 years or older.",
    ),
]


@pytest.fixture(scope="module")
def mined():
    passages = tuple(
        PassageInput(f"p{i}", text, passage_fingerprint(text), source_key=f"s{i}", title=title)
        for i, (title, text) in enumerate(BEFORE)
    )
    scope = parse_scope("Randomized controlled trials and meta-analyses preferred; adults over 60")
    sq = SubquestionInput("s1", SUBQUESTION, passages, ("q",), 3)
    return mine_run(RunInput(QUESTION, (sq,), scope=scope), encode=Embedder().encode)


def test_it_drops_the_statins_benzodiazepine_and_humerus_sentences_as_off_topic(mined):
    result = mined.results["s1"]
    assert result.claims == []
    reasons = {d.anchor.passage_id: d.reason for d in result.dropped}
    assert set(reasons) == {f"p{i}" for i in range(len(BEFORE))}
    for pid, reason in reasons.items():
        assert reason.startswith("off-topic (relevance 0."), (pid, reason)
    gap = mined.gaps[0]
    assert gap.subquestion == "s1" and gap.queries == ("q",)
    assert gap.reason.startswith("no finding was relevant enough")
