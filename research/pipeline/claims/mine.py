"""Rule-based candidate claims: findings from evidence passages, anchored to sentences.

1. Split each passage into sentences (given offsets, else :func:`split_sentences`) and cut
   them at inline structure labels ("… in mice.   OBJECTIVE We aimed …"), each with the
   label in force (:func:`labelled_spans`).
2. Give each sentence a role (:mod:`research.pipeline.claims.roles`): results,
   conclusions and plain statements are proposed; methods, designs, aims, background,
   boilerplate, questions and fragments are dropped with the reason.
3. Atomize: split coordinated facts ("X does A and B", "P; Q", "P, but Q") into one
   claim each; the wording loses labels and reporting frames ("We found that"), the whole
   source sentence stays the anchor quote, at exact offsets.

Scoring, scope, merging, budgets, contested pairs and gaps are
:mod:`research.pipeline.claims.select`, whose ``mine_claims`` runs both for one set of
passages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from research.pipeline.claims.classify import describe
from research.pipeline.claims.records import (
    Anchor,
    ClaimDraft,
    DroppedCandidate,
    MineConfig,
    PassageInput,
)
from research.pipeline.claims.roles import (
    QUESTION,
    Role,
    classify_sentences,
)
from research.pipeline.language.cues import (
    AUXILIARY_VERBS,
    COMMON_VERBS,
    IRREGULAR_PAST_VERBS,
    LEADING_DEMONSTRATIVE,
    REPORTING_FRAME,
)
from research.pipeline.language.direction import DOWN_WORDS, UP_WORDS, negated
from research.pipeline.language.lexicon import content_stems, content_words, is_adverb, words
from research.pipeline.language.quantities import quantities
from research.pipeline.language.sentences import clause_pieces, split_sentences, trim_span
from research.pipeline.language.structure import label_spans, strip_label
from research.pipeline.text import claim_fingerprint

_PREDICATE_SPLIT = re.compile(r"\s+and\s+(?=\S)")


def is_verb(token: str) -> bool:
    t = token.lower().strip(",")
    return t in AUXILIARY_VERBS or t in COMMON_VERBS or t in UP_WORDS or t in DOWN_WORDS


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
    """Drop structure labels and reporting frames ("We found that ...") but keep hedges;
    a leading demonstrative ("These mice…") becomes "The"."""
    text = strip_label(sentence.strip())
    framed = REPORTING_FRAME.sub("", text, count=1)
    text = framed if len(content_words(framed)) >= 2 else text
    return _the_for_demonstrative(text)


def _the_for_demonstrative(text: str) -> str:
    """ "This interaction was confirmed" -> "The interaction was confirmed": only when the
    word after the noun is a known verb, so a pronoun's verb is never read as a noun ("This
    avoids the cost" stays as it is, not "The avoids the cost")."""
    found = LEADING_DEMONSTRATIVE.match(text)
    if not found:
        return text
    rest = text[found.end() :]
    tokens = rest.split()
    return "The " + rest if len(tokens) >= 2 and is_verb(tokens[1]) else text


def split_coordination(sentence: str) -> list[str]:
    """Atomic propositions of one sentence: independent clauses and coordinated predicates.

    "P; Q", "P, but Q" and "P, and Q" split when Q has its own subject and verb; "S V1 O1
    and V2 O2" splits into "S V1 O1" and "S V2 O2"; lists of nouns never split.
    """
    pieces, seps = clause_pieces(clean_sentence(sentence))
    clauses = [pieces[0]]
    for sep, piece in zip(seps, pieces[1:], strict=True):
        current, tokens = clauses[-1], piece.split()
        lead = _leading_adverbs(tokens)
        if lead and lead < len(tokens) and is_verb(tokens[lead]):
            # "…, but only moderately reduce CVD mortality": no subject of its own, and the
            # first clause's may sit behind a frame ("evidence suggests that … tariffs"):
            # kept whole rather than split into a sentence without a subject.
            clauses[-1] = current + sep + piece
        elif _first_verb(current.split()) > 0 and _first_verb(tokens) > 0:
            clauses.append(piece)
        elif _first_verb(current.split()) > 0 and tokens and is_verb(tokens[0]):
            clauses.append(f"{_subject(current)} {piece}")
        else:
            clauses[-1] = current + sep + piece
    parts = [p for clause in clauses for p in _split_predicates(clause)]
    return [p for p in (_tidy(p) for p in parts) if p]


def _leading_adverbs(tokens: list[str]) -> int:
    """How many tokens open the piece as adverbs ("only moderately …")."""
    n = 0
    for token in tokens:
        if is_adverb(token) and not is_verb(token):
            n += 1
        else:
            break
    return n


def _subject(clause: str) -> str:
    tokens = clause.split()
    head = tokens[: max(_first_verb(tokens), 0)]
    while len(head) > 1 and head[-1].lower().endswith("ly"):
        head = head[:-1]  # "X modestly reduces" -> subject "X"
    return " ".join(head)


def _same_form(head: str, other: str) -> bool:
    """A second predicate has its first verb's form ("improved A and balance" is one
    predicate: "balance" is a noun there, not a past tense like "improved")."""
    h, o = head.lower().strip(","), other.lower().strip(",")
    if o in AUXILIARY_VERBS:
        return True
    if h.endswith("ed") or h in IRREGULAR_PAST_VERBS:
        return o.endswith("ed") or o in IRREGULAR_PAST_VERBS
    if h.endswith("s") and h not in AUXILIARY_VERBS:
        return o.endswith("s")
    return True


def _split_predicates(clause: str) -> list[str]:
    """ "S V1 O1 and V2 O2" -> "S V1 O1", "S V2 O2" when V2 is a verb and S is found."""
    pieces = _PREDICATE_SPLIT.split(clause)
    if len(pieces) == 1 or _first_verb(pieces[0].split()) <= 0:
        return [clause]
    subject = _subject(pieces[0])
    head_verb = pieces[0].split()[_first_verb(pieces[0].split())]
    out = [pieces[0]]
    for piece in pieces[1:]:
        first = piece.split()[0] if piece.split() else ""
        if (
            is_verb(first)
            and _same_form(head_verb, first)
            and out[-1].split()[-1].lower() not in ("both", "between")
        ):
            out.append(f"{subject} {piece}")
        else:
            out[-1] = f"{out[-1]} and {piece}"
    return out


def _spans(passage: PassageInput) -> list[tuple[int, int]]:
    return list(passage.sentences) or split_sentences(passage.text)


def labelled_spans(passage: PassageInput) -> list[tuple[int, int, str]]:
    """The passage's sentences, cut at inline structure labels, each with the label in force.

    A label ("RESULTS", "Conclusions:") that a sentence span holds is cut out of it: the
    text before it keeps the earlier label, the text after it is under the new one.
    """
    label = passage.label
    out: list[tuple[int, int, str]] = []
    for start, end in _spans(passage):
        cursor = start
        for found in label_spans(passage.text, start, end):
            if found.start > cursor and (span := trim_span(passage.text, cursor, found.start)):
                out.append((*span, label))
            label, cursor = found.label, found.end
        if span := trim_span(passage.text, cursor, end):
            out.append((*span, label))
    return out


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


@dataclass(frozen=True)
class Proposal:
    """A candidate claim before it is scored: its wording, anchor and sentence role."""

    text: str
    anchor: Anchor
    role: str
    origin: str = "rules"
    claim_type: str = ""


def candidates(
    passages: Sequence[PassageInput], cfg: MineConfig
) -> tuple[list[Proposal], list[DroppedCandidate]]:
    """Every sentence's propositions: findings proposed, everything else dropped with why."""
    proposals: list[Proposal] = []
    dropped: list[DroppedCandidate] = []
    read: list[tuple[Anchor, str]] = []
    for passage in passages:
        for start, end, label in labelled_spans(passage):
            anchor = _anchor(passage, start, end)
            if len(content_words(anchor.quote)) >= cfg.min_content_words:
                read.append((anchor, label))  # else a heading, label or fragment
    roles = classify_sentences([anchor.quote for anchor, _ in read], [label for _, label in read])
    for (anchor, _), role in zip(read, roles, strict=True):
        sentence = anchor.quote
        reason = _unclaimable(sentence, role, cfg)
        if reason:
            dropped.append(DroppedCandidate(sentence, reason, anchor, role=role.role))
            continue
        for text in split_coordination(sentence):
            if len(content_words(text)) < cfg.min_content_words:
                dropped.append(
                    DroppedCandidate(text, "too short to state a fact", anchor, role=role.role)
                )
                continue
            proposals.append(Proposal(text, anchor, role.role))
    return proposals, dropped


def _unclaimable(sentence: str, role: Role, cfg: MineConfig) -> str:
    if not role.is_finding:
        show_cue = role.cue and role.role != QUESTION
        return f"{role.drop_reason} ({role.cue})" if show_cue else role.drop_reason
    if len(words(sentence)) > cfg.max_words * 2:
        return "too long to atomize reliably"
    return ""


def draft_of(proposal: Proposal) -> ClaimDraft:
    info = describe(proposal.text)
    kind = proposal.claim_type or str(info["claim_type"])
    return ClaimDraft(
        text=proposal.text,
        fingerprint=claim_fingerprint(proposal.text),
        claim_type=kind,
        anchors=[proposal.anchor],
        entities=list(info["entities"]),  # type: ignore[call-overload]
        numbers=list(info["numbers"]),  # type: ignore[call-overload]
        hedges=list(info["hedges"]),  # type: ignore[call-overload]
        time_sensitivity=str(info["time_sensitivity"]),
        origin=proposal.origin,
        role=proposal.role,
    )


def _proposition_key(draft: ClaimDraft) -> tuple[frozenset[str], frozenset[float], bool]:
    return (
        frozenset(content_stems(draft.text)),
        frozenset(q.value for q in quantities(draft.text)),
        negated(draft.text),
    )


def same_proposition(a: ClaimDraft, b: ClaimDraft, jaccard: float) -> bool:
    """Same fingerprint, or nearly the same content words with the same numbers and polarity."""
    if a.fingerprint == b.fingerprint:
        return True
    stems, numbers, neg = _proposition_key(a)
    o_stems, o_numbers, o_neg = _proposition_key(b)
    overlap = len(stems & o_stems) / max(1, len(stems | o_stems))
    return overlap >= jaccard and numbers == o_numbers and neg == o_neg


def fold_into(target: ClaimDraft, draft: ClaimDraft) -> None:
    """Another wording of the target's proposition: its wording and anchors join the target."""
    if draft.text != target.text and draft.text not in target.mentions:
        target.mentions.append(draft.text)
    for anchor in draft.anchors:
        if all(
            (a.passage_id, a.start) != (anchor.passage_id, anchor.start) for a in target.anchors
        ):
            target.anchors.append(anchor)


def merge(drafts: Sequence[ClaimDraft], jaccard: float) -> list[ClaimDraft]:
    """One claim per proposition (highest score first); other wordings are folded in."""
    merged: list[ClaimDraft] = []
    for draft in sorted(drafts, key=lambda d: -d.score):
        target = next((m for m in merged if same_proposition(draft, m, jaccard)), None)
        if target is None:
            merged.append(draft)
        else:
            fold_into(target, draft)
    return merged
