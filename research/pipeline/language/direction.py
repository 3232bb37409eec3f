"""Which way a text says an effect goes, and whether it says there is one.

Direction words (:data:`UP_WORDS`, :data:`DOWN_WORDS`), the phrases of no effect
(:data:`NULL_EFFECT`), the relation verb between a claim's subject and object
(:data:`RELATION_VERB`), the tables of opposites (:data:`OPPOSITE_WORDS`,
:data:`EFFECT_VERB_OPPOSITES`, :data:`ANTONYM_PAIRS`), the align verifier's extra words of
change and opposition; and :func:`negated`, :func:`negation_count`, :func:`direction`,
:func:`antonym_clash` that read them. Pure and deterministic.
"""

from __future__ import annotations

import re

from research.pipeline.language.lexicon import NEGATIONS, words, wordset

# Phrases that state the absence of an effect ("no significant difference").
NULL_EFFECT = re.compile(
    r"\b(no (?:significant |statistically significant |detectable |measurable )?"
    r"(?:effect|difference|change|association|correlation|increase|decrease|benefit|impact)"
    r"|not (?:statistically )?significant(?:ly)?|did not (?:differ|change|affect|alter)"
    r"|was not associated|were not associated|is not associated|are not associated"
    r"|unaffected|unchanged|no longer)\b",
    re.IGNORECASE,
)

# The verb that separates a claim's subject (population, exposure) from its object
# (outcome): a direction word, or a common relation verb.
RELATION_VERB = re.compile(
    r"\b(is|are|was|were|has|have|had|can|may|might|could|does|do|did|will|would|"
    r"caus\w*|lead\w*|led|result\w*|associat\w*|correlat\w*|predict\w*|affect\w*|"
    r"increas\w*|decreas\w*|reduc\w*|rais\w*|lower\w*|improv\w*|inhibit\w*|prevent\w*|"
    r"promot\w*|induc\w*|enhanc\w*|suppress\w*|block\w*|activat\w*|requir\w*|"
    r"regulat\w*|mediat\w*|protect\w*|impair\w*|contribut\w*)\b",
    re.IGNORECASE,
)
UP_WORDS = wordset(
    """
    increase increases increased increasing raise raises raised raising elevate elevates
    elevated elevating enhance enhances enhanced enhancing promote promotes promoted
    promoting improve improves improved improving higher greater more upregulate
    upregulates upregulated upregulation induce induces induced inducing activate
    activates activated activation stimulate stimulates stimulated accelerate
    accelerates accelerated boost boosts boosted augment augments augmented gain gains
    exacerbate exacerbates exacerbated worsens worsened rise rises rose risen grew
    """
)
DOWN_WORDS = wordset(
    """
    decrease decreases decreased decreasing reduce reduces reduced reducing lower lowers
    lowered lowering diminish diminishes diminished diminishing suppress suppresses
    suppressed suppressing inhibit inhibits inhibited inhibiting impair impairs impaired
    impairing less fewer downregulate downregulates downregulated downregulation
    attenuate attenuates attenuated block blocks blocked prevent prevents prevented
    preventing slow slows slowed decline declines declined drop drops dropped loss lose
    loses lost weaken weakens weakened protect protects protected alleviate alleviates
    alleviated fell fallen
    """
)
# A claim's opposite for its negation counter query (``research.pipeline.counter.negate``):
# the first of these words in the claim is swapped.
OPPOSITE_WORDS = {
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "increasing": "decreasing",
    "higher": "lower",
    "more": "less",
    "improves": "worsens",
    "improved": "worsened",
    "improve": "worsen",
    "reduces": "increases",
    "reduced": "increased",
    "reduce": "increase",
    "promotes": "inhibits",
    "promoted": "inhibited",
    "inhibits": "promotes",
    "inhibited": "promoted",
    "prevents": "causes",
    "causes": "prevents",
    "lower": "higher",
    "less": "more",
    "decreases": "increases",
    "decreased": "increased",
    "decrease": "increase",
}
# The effect verbs the planner recognizes in "Does X <verb> Y?" and the verb of its
# counter-evidence query ("X increases Y"). Verbs only: "lower" is the verb (-> "raise"),
# where OPPOSITE_WORDS reads it as the adjective (-> "higher").
EFFECT_VERB_OPPOSITES = {
    "reduce": "increase",
    "reduces": "increases",
    "lower": "raise",
    "lowers": "raises",
    "decrease": "increase",
    "decreases": "increases",
    "increase": "reduce",
    "increases": "reduces",
    "raise": "lower",
    "raises": "lowers",
    "improve": "worsen",
    "improves": "worsens",
    "prevent": "cause",
    "prevents": "causes",
    "cause": "prevent",
    "causes": "prevents",
    "affect": "not affect",
    "affects": "does not affect",
    "protect": "harm",
    "protects": "harms",
    "help": "harm",
    "helps": "harms",
    "outperform": "underperform",
    "outperforms": "underperforms",
}
ANTONYM_PAIRS = (
    ("positive", "negative"),
    ("positively", "negatively"),
    ("benign", "malignant"),
    ("beneficial", "harmful"),
    ("safe", "unsafe"),
    ("effective", "ineffective"),
    ("sufficient", "insufficient"),
    ("necessary", "unnecessary"),
    ("presence", "absence"),
    ("present", "absent"),
    ("gain", "loss"),
    ("agonist", "antagonist"),
    ("early", "late"),
    ("high", "low"),
    ("larger", "smaller"),
    ("longer", "shorter"),
    ("before", "after"),
    ("more", "less"),
    ("above", "below"),
    ("dominant", "recessive"),
    ("activation", "inhibition"),
    ("resistant", "susceptible"),
)
_ANTONYMS: dict[str, str] = {}
for _a, _b in ANTONYM_PAIRS:
    _ANTONYMS[_a] = _b
    _ANTONYMS[_b] = _a


# Everyday words of change and of opposition that the align verifier reads
# (research.pipeline.verify.align) beyond UP_WORDS, DOWN_WORDS and ANTONYM_PAIRS, which
# serve retrieval and mining too: a noun such as "spikes" is an outcome there, not a
# direction.
MORE_UP = frozenset(
    [
        "rose",
        "climbed",
        "grew",
        "grown",
        "jumped",
        "soared",
        "surged",
        "expanded",
        "doubled",
        "tripled",
    ]
)
MORE_DOWN = frozenset(
    ["fell", "fallen", "falling", "shrank", "shrunk", "plunged", "slumped", "tumbled", "dipped"]
)
MORE_OPPOSITES = (
    ("cheaper", "expensive"),
    ("cheap", "expensive"),
    ("won", "lost"),
    ("win", "lose"),
    ("wins", "loses"),
    ("winner", "loser"),
    ("ahead", "behind"),
    ("approved", "rejected"),
    ("accepted", "rejected"),
    ("success", "failure"),
    ("succeeded", "failed"),
    ("allowed", "banned"),
    ("rural", "urban"),
    ("minority", "majority"),
    ("inside", "outside"),
)
# Verbs of quantitative change that say the same thing ("reduced" = "lowered" =
# "decreased"): a claim word of one class is stated by any word of its class. Causal and
# preventive verbs are not here ("prevents" is not "reduces").
CHANGE_CLASSES: tuple[frozenset[str], ...] = (
    frozenset(
        [
            "reduce",
            "reduces",
            "reduced",
            "reducing",
            "reduction",
            "lower",
            "lowers",
            "lowered",
            "lowering",
            "decrease",
            "decreases",
            "decreased",
            "decreasing",
            "diminish",
            "diminishes",
            "diminished",
            "decline",
            "declines",
            "declined",
            "declining",
            "drop",
            "drops",
            "dropped",
            "fell",
            "fallen",
        ]
    ),
    frozenset(
        [
            "increase",
            "increases",
            "increased",
            "increasing",
            "raise",
            "raises",
            "raised",
            "raising",
            "elevate",
            "elevates",
            "elevated",
            "rise",
            "rises",
            "rose",
            "risen",
            "grew",
            "grown",
            "boost",
            "boosts",
            "boosted",
            "augment",
            "augments",
            "augmented",
        ]
    ),
)


def negated(text: str) -> bool:
    """True when the text states a negation or the absence of an effect."""
    return bool(NULL_EFFECT.search(text)) or any(w in NEGATIONS for w in words(text))


def negation_count(text: str) -> int:
    return sum(1 for w in words(text) if w in NEGATIONS) + len(NULL_EFFECT.findall(text))


def direction(text: str) -> int:
    """+1 when the text speaks of increase, -1 of decrease, 0 for neither or both."""
    ws = words(text)
    up = sum(1 for w in ws if w in UP_WORDS)
    down = sum(1 for w in ws if w in DOWN_WORDS)
    return (up > down) - (down > up)


def antonym_clash(a: str, b: str) -> list[tuple[str, str]]:
    """Antonym pairs where one word occurs only in ``a`` and its opposite only in ``b``."""
    wa, wb = set(words(a)), set(words(b))
    return sorted(
        (w, _ANTONYMS[w])
        for w in wa - wb
        if w in _ANTONYMS and _ANTONYMS[w] in wb and _ANTONYMS[w] not in wa
    )
