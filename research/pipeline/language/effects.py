"""The grammar tables of effect questions: the verbs, markers and clause patterns that
:mod:`research.pipeline.effect` reads "Does X reduce Y in Z?" with.

:data:`EFFECT_VERBS` (the verbs of :data:`EFFECT_VERB_OPPOSITES` and :data:`MORE_VERBS`,
negated ones left out), the clause patterns (:data:`EFFECT_CLAUSES`, :data:`NOMINAL_EFFECT`,
:data:`LEADING_EFFECT_VERB`), the markers where an outcome ends and its comparator or
population begins, the verbs of association and the finite verbs no exposure holds. The
parsing itself stays in :mod:`research.pipeline.effect`.
"""

from __future__ import annotations

import re

from research.pipeline.language.direction import EFFECT_VERB_OPPOSITES

# Where an outcome ends and its population begins: "absences in older pupils".
POPULATION_MARKERS = (" in ", " among ", " for ", " of patients with ")
# Where an outcome ends and what X is compared with begins: "runtime errors compared with
# JavaScript". The comparator runs to the population marker or the end.
COMPARATOR_MARKERS = (
    " compared with ",
    " compared to ",
    " versus ",
    " vs. ",
    " vs ",
    " relative to ",
    " rather than ",
    " instead of ",
)
# What a question's effect verb can be, besides :data:`EFFECT_VERB_OPPOSITES`.
MORE_VERBS = (
    "worsen",
    "worsens",
    "influence",
    "influences",
    "impact",
    "impacts",
    "change",
    "changes",
    "alter",
    "alters",
    "slow",
    "slows",
    "delay",
    "delays",
    "shorten",
    "shortens",
    "extend",
    "extends",
    "boost",
    "boosts",
    "harm",
    "harms",
    "benefit",
    "benefits",
    "predict",
    "predicts",
    "lead to",
    "leads to",
    "contribute to",
    "contributes to",
    "protect against",
    "protects against",
    "be associated with",
    "associated with",
    "linked to",
    "related to",
)
EFFECT_VERBS = frozenset(
    v for v in {*EFFECT_VERB_OPPOSITES, *MORE_VERBS} if " not " not in f" {v} "
)
_VERBS = "|".join(re.escape(v) for v in sorted(EFFECT_VERBS, key=lambda v: (-len(v), v)))
_AUX = r"(?:does|do|did|is|are|was|were|can|could|will|would|should|has|have|may|might|must)"
_REST = rf"(?P<x>[^,;?]+?)\s+(?:really\s+|actually\s+|also\s+)?(?P<verb>{_VERBS})\s+(?P<y>[^;?]+)"
# "… whether X reduces Y", "… the claim that X reduces Y" first; then a question's own
# auxiliary: "Does X reduce Y", "How does X affect Y", "Through what mechanism could X affect
# Y".
EFFECT_CLAUSES = (
    re.compile(
        rf"\b(?:whether|if|(?:claim|hypothesis|idea|notion|view|evidence) that)\s+{_REST}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:^|\b(?:what|how|why|which|when|where|who|whom)\b(?:\s+\w+){{0,3}}?\s+)(?P<aux>{_AUX})\s+"
        rf"{_REST}",
        re.IGNORECASE,
    ),
)
LEADING_EFFECT_VERB = re.compile(rf"^(?P<verb>{_VERBS})\s+(?P<y>.+)$", re.IGNORECASE)
# The nominal form's "verb" is its preposition: "the effect of X on Y".
NOMINAL_VERBS = {
    "on": "affect",
    "for": "affect",
    "in preventing": "prevent",
    "in reducing": "reduce",
}
NOMINAL_EFFECT = re.compile(
    r"\b(?:effects?|impacts?|influences?|benefits?|harms?|roles?|consequences?)\s+of\s+"
    r"(?P<x>[^,;?]+?)\s+(?P<verb>on|in preventing|in reducing|for)\s+(?P<y>[^;?]+)",
    re.IGNORECASE,
)
# Verbs of association rather than of action: "X is associated with Y".
ASSOCIATIONS = frozenset(["associated with", "linked to", "related to"])
# An exposure is a noun phrase: one holding a finite verb is a statement, not "Does X …".
FINITE_VERBS = frozenset(
    ["is", "are", "was", "were", "be", "been", "has", "have", "had", "does", "do", "did"]
)
