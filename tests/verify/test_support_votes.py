"""Issue 26, item 3: a linear family votes *supports* only when support is the most likely
label, whatever its (low, quorum-chosen) support threshold."""

from __future__ import annotations

import numpy as np

from research.pipeline.verify.learned import LinearModel, VerifierWeights
from research.pipeline.verify.records import VoteVerdict


def model(support=0.2, contradict=0.65):
    n = 1
    return LinearModel(
        mean=np.zeros(n),
        scale=np.ones(n),
        coef=np.zeros((3, n)),
        intercept=np.zeros(3),
        support_threshold=support,
        contradict_threshold=contradict,
        feature_names=("x",),
    )


def test_it_does_not_vote_supports_when_contradiction_is_more_likely():
    # The vote of issue 26: P(support) 0.21 against P(contradict) 0.56.
    decision = model().decide(np.array([0.21, 0.56, 0.23]))
    assert decision.verdict == VoteVerdict.INSUFFICIENT
    assert "P(support)=0.21" in decision.summary


def test_it_does_not_vote_supports_when_not_enough_info_is_more_likely():
    assert model().decide(np.array([0.30, 0.10, 0.60])).verdict == VoteVerdict.INSUFFICIENT


def test_it_votes_supports_when_support_is_the_most_likely_label():
    decision = model().decide(np.array([0.45, 0.25, 0.30]))
    assert decision.verdict == VoteVerdict.SUPPORTS
    assert model().decide(np.array([0.45, 0.25, 0.30]), may_support=False).verdict == (
        VoteVerdict.INSUFFICIENT
    )


def test_it_still_contradicts_above_the_contradiction_threshold():
    assert model().decide(np.array([0.10, 0.70, 0.20])).verdict == VoteVerdict.CONTRADICTS


def test_the_shipped_models_never_support_below_another_label():
    """Over a grid of probability triples, every shipped learned model (and fold) keeps
    support votes to triples where support is the largest probability."""
    weights = VerifierWeights.load()
    grid = [
        np.array([s, c, 1.0 - s - c])
        for s in np.linspace(0.0, 1.0, 21)
        for c in np.linspace(0.0, 1.0 - s, 11)
    ]
    for m in [weights.model, *weights.folds]:
        for p in grid:
            if m.decide(p).verdict == VoteVerdict.SUPPORTS:
                assert p[0] >= p[1] and p[0] >= p[2]
