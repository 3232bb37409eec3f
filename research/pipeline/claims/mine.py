"""Deterministic claim mining: atomic claims from evidence passages, anchored to sentences.

1. Split each passage into sentences (given offsets, else :func:`split_sentences`).
2. Keep declarative sentences long enough to state something; record the rest that
   looked like claims as dropped, with the reason.
3. Atomize: split coordinated facts ("X does A and B", "P; Q", "P, but Q") into one
   claim each; the whole source sentence stays the anchor quote, at exact offsets.
4. Describe: type, entities, numbers with units, hedges, time sensitivity.
5. Merge the same proposition found in several passages (same fingerprint, or nearly
   the same content words with the same numbers and polarity) into one claim with
   several anchors.
6. Rank by relevance to the subquestion and by finding-like wording; keep
   ``max_claims``, drop the rest as over budget.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from research.pipeline.claims.classify import describe
from research.pipeline.claims.records import (
    Anchor,
    ClaimDraft,
    DroppedCandidate,
    MineConfig,
    MiningResult,
    PassageInput,
)
from research.pipeline.text import (
    DOWN_WORDS,
    UP_WORDS,
    claim_fingerprint,
    content_stems,
    content_words,
    negated,
    quantities,
    split_sentences,
    words,
)

_LABEL = re.compile(
    r"^(?:[A-Z][A-Z &/]{2,}[A-Z]:?|(?:Background|Objectives?|Methods?|Results?|Conclusions?|"
    r"Findings|Interpretation|Purpose|Aims?|Context|Design|Setting|Summary|Abstract)\s*:)\s+"
)
_FRAME = re.compile(
    r"^(?:(?:here,?|in this (?:study|paper|work),?|overall,?|together,?|collectively,?|"
    r"importantly,?|notably,?|moreover,?|furthermore,?|in addition,?|additionally,?|"
    r"finally,?|thus,?|therefore,?|however,?|in summary,?|in conclusion,?)\s+)*"
    r"(?:(?:we|our (?:results|data|findings)|these (?:results|data|findings)|this study|"
    r"the (?:results|data|study))\s+(?:also\s+)?"
    r"(?:show|showed|shows|demonstrate|demonstrated|demonstrates|find|found|report|"
    r"reported|reveal|revealed|reveals|observe|observed|establish|established|confirm|"
    r"confirmed|identify|identified)\s+that\s+)?",
    re.IGNORECASE,
)
_NON_CLAIM = re.compile(
    r"^(?:we (?:aimed|sought|set out|investigated|examined|assessed|evaluated|performed|"
    r"conducted|analy[sz]ed|studied|used|designed)|to (?:determine|investigate|assess|"
    r"evaluate|examine|test|explore)|the (?:aim|objective|purpose|goal) of|this (?:study|"
    r"review|paper|article) (?:aims|describes|presents|reviews))\b",
    re.IGNORECASE,
)
_FINDING = re.compile(
    r"\b(show\w*|found|demonstrat\w*|reveal\w*|associated|increas\w*|decreas\w*|reduc\w*|"
    r"improv\w*|significant\w*|caus\w*|requir\w*|is|are|was|were|can|has|have)\b",
    re.IGNORECASE,
)
_AUX_VERBS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "can",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "will",
        "would",
        "does",
        "do",
        "did",
        "remains",
        "remain",
        "seems",
        "seem",
        "appears",
        "appear",
    ]
)
_COMMON_VERBS = frozenset(
    [
        "combines",
        "combine",
        "uses",
        "use",
        "requires",
        "require",
        "shows",
        "show",
        "causes",
        "cause",
        "contains",
        "contain",
        "includes",
        "include",
        "provides",
        "provide",
        "depends",
        "depend",
        "affects",
        "affect",
        "produces",
        "produce",
        "binds",
        "bind",
        "encodes",
        "encode",
        "regulates",
        "regulate",
        "mediates",
        "mediate",
        "enables",
        "enable",
        "allows",
        "allow",
        "supports",
        "support",
        "outperforms",
        "outperform",
        "achieves",
        "achieve",
        "exhibits",
        "exhibit",
        "remains",
        "occurs",
        "occur",
        "leads",
        "lead",
        "results",
        "correlates",
        "correlate",
        "predicts",
        "predict",
        "balances",
        "balance",
        "relieves",
        "relieve",
        "treats",
        "treat",
        "improves",
        "improve",
        "reduces",
        "reduce",
        "lowers",
        "lower",
        "raises",
        "raise",
        "prevents",
        "prevent",
        "protects",
        "protect",
        "drives",
        "drive",
        "became",
        "become",
        "becomes",
        "made",
        "makes",
        "gave",
        "gives",
        "took",
        "takes",
        "showed",
        "shown",
        "led",
        "began",
        "rose",
        "fell",
        "grew",
        "remained",
        "emerged",
        "performed",
        "performs",
        "played",
        "plays",
    ]
)
_CLAUSE_SPLIT = re.compile(r";\s+|,\s+(?:but|whereas|while|although)\s+|,\s+and\s+(?=\S)")
_PREDICATE_SPLIT = re.compile(r"\s+and\s+(?=\S)")


def is_verb(token: str) -> bool:
    t = token.lower().strip(",")
    return t in _AUX_VERBS or t in _COMMON_VERBS or t in UP_WORDS or t in DOWN_WORDS


def _first_verb(tokens: list[str]) -> int:
    for i, token in enumerate(tokens):
        if i > 0 and is_verb(token):
            return i
    return -1


def _tidy(text: str) -> str:
    text = text.strip().strip(",;:").strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text.rstrip(".") + "."


def clean_sentence(sentence: str) -> str:
    """Drop section labels and reporting frames ("We found that ...") but keep hedges."""
    text = _LABEL.sub("", sentence.strip())
    framed = _FRAME.sub("", text, count=1)
    return framed if len(content_words(framed)) >= 2 else text


def split_coordination(sentence: str) -> list[str]:
    """Atomic propositions of one sentence: independent clauses and coordinated predicates.

    "P; Q", "P, but Q" and "P, and Q" split when Q has its own subject and verb; "S V1 O1
    and V2 O2" splits into "S V1 O1" and "S V2 O2"; lists of nouns never split.
    """
    pieces = _CLAUSE_SPLIT.split(clean_sentence(sentence))
    seps = _CLAUSE_SPLIT.findall(clean_sentence(sentence))
    clauses = [pieces[0]]
    for sep, piece in zip(seps, pieces[1:], strict=True):
        current, tokens = clauses[-1], piece.split()
        if _first_verb(current.split()) > 0 and _first_verb(tokens) > 0:
            clauses.append(piece)
        elif _first_verb(current.split()) > 0 and tokens and is_verb(tokens[0]):
            clauses.append(f"{_subject(current)} {piece}")
        else:
            clauses[-1] = current + sep + piece
    parts = [p for clause in clauses for p in _split_predicates(clause)]
    return [p for p in (_tidy(p) for p in parts) if p]


def _subject(clause: str) -> str:
    tokens = clause.split()
    head = tokens[: max(_first_verb(tokens), 0)]
    while len(head) > 1 and head[-1].lower().endswith("ly"):
        head = head[:-1]  # "X modestly reduces" -> subject "X"
    return " ".join(head)


def _split_predicates(clause: str) -> list[str]:
    """ "S V1 O1 and V2 O2" -> "S V1 O1", "S V2 O2" when V2 is a verb and S is found."""
    pieces = _PREDICATE_SPLIT.split(clause)
    if len(pieces) == 1 or _first_verb(pieces[0].split()) <= 0:
        return [clause]
    subject = _subject(pieces[0])
    out = [pieces[0]]
    for piece in pieces[1:]:
        first = piece.split()[0] if piece.split() else ""
        if is_verb(first) and out[-1].split()[-1].lower() not in ("both", "between"):
            out.append(f"{subject} {piece}")
        else:
            out[-1] = f"{out[-1]} and {piece}"
    return out


def _spans(passage: PassageInput) -> list[tuple[int, int]]:
    return list(passage.sentences) or split_sentences(passage.text)


def _anchor(passage: PassageInput, start: int, end: int) -> Anchor:
    return Anchor(
        passage_id=passage.passage_id,
        quote=passage.text[start:end],
        start=start,
        end=end,
        passage_fingerprint=passage.fingerprint,
        snapshot_start=passage.snapshot_start,
        source_key=passage.source_key or passage.cluster,
    )


def candidates(
    passages: Sequence[PassageInput], cfg: MineConfig
) -> tuple[list[ClaimDraft], list[DroppedCandidate]]:
    drafts: list[ClaimDraft] = []
    dropped: list[DroppedCandidate] = []
    focus = content_stems(cfg.focus)
    for rank, passage in enumerate(passages):
        for start, end in _spans(passage):
            anchor = _anchor(passage, start, end)
            sentence = anchor.quote
            if len(content_words(sentence)) < cfg.min_content_words:
                continue  # headings, labels, fragments: not a candidate claim
            reason = _unclaimable(sentence, cfg)
            if reason:
                dropped.append(DroppedCandidate(sentence, reason, anchor))
                continue
            for text in split_coordination(sentence):
                if len(content_words(text)) < cfg.min_content_words:
                    dropped.append(DroppedCandidate(text, "too short to state a fact", anchor))
                    continue
                drafts.append(_draft(text, anchor, _score(text, passage, rank, focus)))
    return drafts, dropped


def _unclaimable(sentence: str, cfg: MineConfig) -> str:
    if sentence.rstrip().endswith("?"):
        return "a question, not a claim"
    if _NON_CLAIM.match(clean_sentence(sentence)):
        return "describes the study's aim or method, not a finding"
    if len(words(sentence)) > cfg.max_words * 2:
        return "too long to atomize reliably"
    return ""


def _draft(text: str, anchor: Anchor, score: float, origin: str = "rules") -> ClaimDraft:
    info = describe(text)
    return ClaimDraft(
        text=text,
        fingerprint=claim_fingerprint(text),
        claim_type=str(info["claim_type"]),
        anchors=[anchor],
        entities=list(info["entities"]),  # type: ignore[call-overload]
        numbers=list(info["numbers"]),  # type: ignore[call-overload]
        hedges=list(info["hedges"]),  # type: ignore[call-overload]
        time_sensitivity=str(info["time_sensitivity"]),
        origin=origin,
        score=score,
    )


def _score(text: str, passage: PassageInput, rank: int, focus: set[str]) -> float:
    stems = content_stems(text)
    relevance = len(stems & focus) / len(focus) if focus else 0.0
    finding = min(1.0, len(_FINDING.findall(text)) / 2)
    return round(relevance + 0.5 * finding + 1.0 / (1 + rank) + 0.1 * passage.score, 6)


def _proposition_key(draft: ClaimDraft) -> tuple[frozenset[str], frozenset[float], bool]:
    return (
        frozenset(content_stems(draft.text)),
        frozenset(q.value for q in quantities(draft.text)),
        negated(draft.text),
    )


def merge(drafts: Sequence[ClaimDraft], jaccard: float) -> list[ClaimDraft]:
    """One claim per proposition; anchors and other wordings of it are folded in."""
    merged: list[ClaimDraft] = []
    keys: list[tuple[frozenset[str], frozenset[float], bool]] = []
    by_fp: dict[str, ClaimDraft] = {}
    for draft in sorted(drafts, key=lambda d: -d.score):
        target = by_fp.get(draft.fingerprint)
        if target is None:
            stems, numbers, neg = _proposition_key(draft)
            for other, (o_stems, o_numbers, o_neg) in zip(merged, keys, strict=True):
                overlap = len(stems & o_stems) / max(1, len(stems | o_stems))
                if overlap >= jaccard and numbers == o_numbers and neg == o_neg:
                    target = other
                    break
        if target is None:
            merged.append(draft)
            keys.append(_proposition_key(draft))
            by_fp[draft.fingerprint] = draft
            continue
        by_fp[draft.fingerprint] = target
        if draft.text != target.text and draft.text not in target.mentions:
            target.mentions.append(draft.text)
        for anchor in draft.anchors:
            if all(
                (a.passage_id, a.start) != (anchor.passage_id, anchor.start) for a in target.anchors
            ):
                target.anchors.append(anchor)
    return merged


def mine_claims(passages: Sequence[PassageInput], cfg: MineConfig | None = None) -> MiningResult:
    """Atomic claims of a subquestion's evidence, merged, ranked, within budget."""
    cfg = cfg or MineConfig()
    drafts, dropped = candidates(passages, cfg)
    merged = merge(drafts, cfg.merge_jaccard)
    merged.sort(key=lambda d: (-d.score, d.fingerprint))
    for draft in merged[cfg.max_claims :]:
        dropped.append(
            DroppedCandidate(
                draft.text,
                f"over the claim budget of {cfg.max_claims} for this subquestion",
                draft.anchors[0],
                draft.claim_type,
            )
        )
    return MiningResult(claims=merged[: cfg.max_claims], dropped=dropped)
