"""The vitamin D ledger's off-topic and off-outcome claims are dropped, with their reasons.

1. Sentences and source titles the SciFact vitamin D run kept as claims before
   findings-only mining (``docs/bench/vitamin-d-claims.md``: statins, benzodiazepines,
   humerus surgery, alendronate), mined under the plan's question and its first
   subquestion with the real sentence encoder: every one is dropped as "off-topic
   (relevance x".
2. The mining input of a real SciFact vitamin D run on main 86f1fec (22 claims, 11 of them
   on vitamin D but not on fractures or falls, one an analysis step), replayed through
   ``mine_run``: the off-outcome findings and the analysis step are dropped with their
   reasons; every kept claim names an outcome asked (or sits under the doses subquestion,
   which does not ask one) and says how.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research.pipeline.claims import (
    ClaimDraft,
    PassageInput,
    RunInput,
    RunMining,
    SubquestionInput,
    mine_run,
)
from research.pipeline.claims.design import SourceProfile
from research.pipeline.claims.outcome import outcome_focus
from research.pipeline.claims.roles import FINDING_ROLES
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
    assert gap.reason.startswith("no finding")


# --- the vitamin D run's own mining input, replayed --------------------------------------

FIXTURE = Path(__file__).parent.parent / "fixtures" / "claims" / "vitamin_d_mining_input.json"


def run_input() -> RunInput:
    """What the mine stage of a real SciFact vitamin D run handed to ``mine_run`` (made by
    ``tests/fixtures/claims/dump_mining_input.py``)."""
    data = json.loads(FIXTURE.read_text())
    subquestions = tuple(
        SubquestionInput(
            key=sq["key"],
            text=sq["text"],
            passages=tuple(
                PassageInput(**{**p, "sentences": tuple(tuple(s) for s in p["sentences"])})
                for p in sq["passages"]
            ),
            queries=tuple(sq["queries"]),
            priority=sq["priority"],
        )
        for sq in data["subquestions"]
    )
    return RunInput(
        data["question"],
        subquestions,
        parse_scope(data["scope"]),
        {key: SourceProfile(**p) for key, p in data["profiles"].items()},
        data["idf"],
    )


@pytest.fixture(scope="module")
def replayed():
    return mine_run(run_input(), encode=Embedder().encode)


def kept_claims(mining: RunMining) -> dict[str, tuple[str, ClaimDraft]]:
    return {c.text: (key, c) for key, r in mining.results.items() for c in r.claims}


def dropped_candidates(mining: RunMining) -> dict[str, str]:
    return {d.text: d.reason for r in mining.results.values() for d in r.dropped}


# Claims of the ledger before outcome-aware relevance that name vitamin D but not fractures or
# falls (docs/bench/vitamin-d-claims.md): mortality, colorectal cancer, magnesium, obesity.
OFF_OUTCOME = [
    "A meta-analysis published in 2007 showed that vitamin D supplementation was associated",
    "From these results and supporting evidence from previous studies, we conclude that",
    "In contrast to 25(OH)D, we did not observe an association",
    "individuals with >or=1000IU/day oral Vitamin D (p<0.0001)",
    "Benefit from higher 25(OH)D concentrations was observed for cancers",
    "elevated among the women in the highest quintile",
    "In subjects with a low vitamin D and raised PTH mean retention",
    "This study confirms that in patients with established osteoporosis",
    "All subjects, within the low vitamin D and low PTH group",
    "BMI and adiposity have been negatively associated",
    "Plausible explanations include sequestration in adipose tissue",
]
TREND_LINE = "The point on each linear trend line corresponding to an odds ratio of 0.50"
FRACTURES = "Vitamin D insufficiency and deficiency increase the risk of skeletal fractures."


def test_it_drops_the_on_subject_off_outcome_findings_of_the_real_run(replayed):
    kept = kept_claims(replayed)
    quotes = [a.quote for _, c in kept.values() for a in c.anchors]
    dropped = [d for r in replayed.results.values() for d in r.dropped]
    for prefix in OFF_OUTCOME:
        assert not any(prefix in q for q in quotes), prefix
        reasons = [d.reason for d in dropped if prefix in d.anchor.quote]
        assert any(r.startswith("off-outcome (relevance 0.") for r in reasons), (prefix, reasons)
    mortality = next(d.reason for d in dropped if OFF_OUTCOME[0] in d.anchor.quote)
    assert "it is about mortality, not fractures or falls" in mortality


def test_it_keeps_findings_on_the_outcome_with_their_score_and_how_they_name_it(replayed):
    kept = kept_claims(replayed)
    key, fractures = kept[FRACTURES]
    assert fractures.relevance is not None and fractures.relevance.outcome_match == "fractures"
    # rank 2 since the learned roles: the role model reads it as background (a statement,
    # no result bonus) and the compliance conclusion above it gets the bonus
    assert fractures.rank <= 2
    focus = {sq.key: outcome_focus(QUESTION, sq.text) for sq in run_input().subquestions}
    for text, (key, claim) in kept.items():
        assert claim.role in FINDING_ROLES, text
        assert claim.relevance is not None and claim.relevance.names_outcome, text
        # the outcome is named, or the subquestion asks about the supplement itself (doses)
        wanted = focus[key]
        assert wanted is not None
        assert claim.relevance.outcome_match or not wanted.required, (key, text)


def test_it_drops_the_analysis_step_the_run_kept_as_a_claim(replayed):
    kept = kept_claims(replayed)
    assert not any(t.startswith(TREND_LINE) for t in kept)
    reasons = dropped_candidates(replayed)
    [why] = {r for t, r in reasons.items() if t.startswith(TREND_LINE)}
    assert "(method), not a finding (label METHODS)" in why
