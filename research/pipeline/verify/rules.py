"""Rule checks: opposite directions and antonyms, numbers and units, entity and time scope,
hedging.

Each check looks at the passage sentence that covers most of the claim's content words
and votes with a rationale a reviewer can read. Rules are a *check* family
(``AggregateConfig.check_families``): they contradict and block (overstatement, scope
gap) but never vote ``supports`` and never form part of a quorum; strict literal
support is the ``coverage`` family's job (:mod:`research.pipeline.verify.coverage`).

A negation word on one side only is no check of its own: "did not reduce" against
"reduces" is an opposite direction, which the direction check reads, and a sentence that
restates the claim with a negation elsewhere in it ("… otherwise the GIL is re-enabled
after importing a module that does not support it"; "agencies are not required to release
more than 20 percent" against "the minimum requirement is 20 percent") is no
contradiction. Measured out-of-fold, the negation check decided two benchmark claims, a
claim and its opposite, failing both; in real runs it failed true claims
(docs/bench/verdict_ablation.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from research.pipeline.language.direction import antonym_clash
from research.pipeline.language.lexicon import content_stems, hedges, is_meaningful_quote
from research.pipeline.language.quantities import Quantity, quantities, years
from research.pipeline.verify.features import item_sentences, polarity
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Flag, Vote, VoteVerdict

# The checks of this family that an ablation can switch off (``bench_verification
# --ablation``); the product runs with all of them.
RULE_CHECKS = ("scope", "numbers", "direction", "antonym", "hedging")


@dataclass(frozen=True)
class RulesConfig:
    on_topic: float = 0.6  # share of claim content words a sentence must cover to be compared
    contradiction_score: float = 0.75
    clash_score: float = 0.6
    without: frozenset[str] = frozenset()  # names in ``RULE_CHECKS``, for the ablation

    def uses(self, check: str) -> bool:
        return check not in self.without


@dataclass(frozen=True)
class Finding:
    verdict: VoteVerdict
    score: float
    rationale: str
    flags: tuple[str, ...] = ()


class RulesVerifier:
    family = "rules"
    name = "rules"

    def __init__(self, config: RulesConfig | None = None) -> None:
        self.config = config or RulesConfig()

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        return [self.judge_one(claim, item) for item in items]

    def judge_one(self, claim: ClaimInput, item: EvidenceItem) -> Vote:
        quote, cov = best_sentence(claim.text, item)
        finding = check(claim, item.text, quote, cov, self.config)
        return Vote.bind(
            self.name,
            self.family,
            claim,
            item,
            verdict=finding.verdict,
            score=finding.score,
            quote=quote,
            rationale=finding.rationale,
            flags=finding.flags,
        )


def best_sentence(claim_text: str, item: EvidenceItem) -> tuple[str, float]:
    """The quotable sentence covering most of the claim's content words, and that share."""
    stems = content_stems(claim_text)
    best, best_cov = "", -1.0
    for a, b in item_sentences(item):
        sentence = item.text[a:b]
        cov = len(stems & content_stems(sentence)) / len(stems) if stems else 0.0
        if is_meaningful_quote(sentence) and cov > best_cov:
            best, best_cov = sentence, cov
    return best, max(best_cov, 0.0)


def check(claim: ClaimInput, passage: str, sentence: str, cov: float, cfg: RulesConfig) -> Finding:
    """The first rule that fires, in order of severity."""
    for rule in (_scope, _numbers, _polarity, _hedging):
        finding = rule(claim, passage, sentence, cov, cfg)
        if finding is not None:
            return finding
    return Finding(
        VoteVerdict.INSUFFICIENT,
        1.0 - cov,
        f"the closest sentence covers {cov:.0%} of the claim's terms; not enough to decide",
    )


def _scope(
    claim: ClaimInput, passage: str, sentence: str, cov: float, cfg: RulesConfig
) -> Finding | None:
    if not cfg.uses("scope"):
        return None
    if not sentence:
        return Finding(VoteVerdict.INSUFFICIENT, 1.0, "the passage has no quotable sentence")
    flat = _flat(passage)
    missing = [e for e in claim.entities if not all(_flat(w) in flat for w in e.split())]
    if missing:
        return Finding(
            VoteVerdict.INSUFFICIENT,
            0.9,
            "the evidence never names " + ", ".join(repr(e) for e in missing[:3]),
            (Flag.SCOPE_GAP.value,),
        )
    claim_years, passage_years = set(years(claim.text)), set(years(passage))
    if claim_years and not claim_years <= passage_years:
        return Finding(
            VoteVerdict.INSUFFICIENT,
            0.8,
            f"time scope: the claim is about {sorted(claim_years)}, "
            f"the evidence mentions {sorted(passage_years) or 'no year'}",
            (Flag.SCOPE_GAP.value,),
        )
    return None


def _flat(text: str) -> str:
    """Lower case, letters and digits only: "MUC1-C" matches "MUC1 C", "RANK/RANKL" too."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _numbers(
    claim: ClaimInput, passage: str, sentence: str, cov: float, cfg: RulesConfig
) -> Finding | None:
    claimed = quantities(claim.text)
    if not claimed or cov < cfg.on_topic or not cfg.uses("numbers"):
        return None
    found = quantities(passage)
    for q in claimed:
        if any(_same(q, f) for f in found):
            continue
        other_value = [f for f in found if f.unit == q.unit and q.unit and f.value != q.value]
        other_unit = [f for f in found if f.value == q.value and f.unit != q.unit]
        if other_value:
            return Finding(
                VoteVerdict.CONTRADICTS,
                cfg.contradiction_score,
                f"number mismatch: the claim says {q.text!r}, "
                f"the evidence says {', '.join(repr(f.text) for f in other_value[:3])}",
            )
        if other_unit and (q.unit or other_unit[0].unit):
            return Finding(
                VoteVerdict.CONTRADICTS,
                cfg.clash_score,
                f"unit mismatch: the claim says {q.text!r}, "
                f"the evidence says {other_unit[0].text!r}",
            )
    return None


def _same(a: Quantity, b: Quantity) -> bool:
    return a.value == b.value and (a.unit == b.unit or not a.unit or not b.unit)


def _polarity(
    claim: ClaimInput, passage: str, sentence: str, cov: float, cfg: RulesConfig
) -> Finding | None:
    if cov < cfg.on_topic:
        return None
    score = cfg.clash_score + (cfg.contradiction_score - cfg.clash_score) * cov
    if cfg.uses("direction") and polarity(claim.text) * polarity(sentence) < 0:
        return Finding(
            VoteVerdict.CONTRADICTS,
            score,
            "direction mismatch: the claim and the evidence state opposite effects",
        )
    clash = antonym_clash(claim.text, sentence) if cfg.uses("antonym") else []
    if clash:
        a, b = clash[0]
        return Finding(
            VoteVerdict.CONTRADICTS,
            score,
            f"antonym mismatch: the claim says {a!r} where the evidence says {b!r}",
        )
    return None


def _hedging(
    claim: ClaimInput, passage: str, sentence: str, cov: float, cfg: RulesConfig
) -> Finding | None:
    evidence_hedges = sorted(set(hedges(sentence)) - set(hedges(claim.text)))
    if cov < cfg.on_topic or not evidence_hedges or not cfg.uses("hedging"):
        return None
    return Finding(
        VoteVerdict.INSUFFICIENT,
        0.7,
        f"overstatement: the evidence is hedged ({', '.join(evidence_hedges)}) "
        "but the claim is stated as certain",
        (Flag.OVERSTATEMENT.value,),
    )
