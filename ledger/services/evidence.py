"""The only writer of EvidenceLink rows: a claim bound to a passage by a verbatim quote.

Every quote is checked against ``snapshot.text`` at its offsets before it is stored
(:func:`bind_quote`): it must be there verbatim and long enough to mean something.
"""

from __future__ import annotations

from collections.abc import Sequence

from ledger.models import Claim, EvidenceLink, Passage, Pool, Relation
from research.pipeline.claims.records import Anchor
from research.pipeline.language.lexicon import is_meaningful_quote
from research.pipeline.verify.features import item_sentences
from research.pipeline.verify.records import ClaimVerdict, EvidenceItem

MIN_QUOTE_CHARS = 20
MIN_QUOTE_WORDS = 3

Binding = tuple[Passage, int, int]  # the passage and the quote's snapshot span


def bind_quote(snapshot_text: str, quote: str, start: int) -> tuple[int, int] | None:
    """(start, end) when ``quote`` is at ``start`` in the snapshot and means something."""
    end = start + len(quote)
    if start < 0 or snapshot_text[start:end] != quote:
        return None
    if not is_meaningful_quote(quote, min_chars=MIN_QUOTE_CHARS, min_content_words=MIN_QUOTE_WORDS):
        return None
    return start, end


def bind_anchor(anchor: Anchor) -> Binding | None:
    """The anchor's passage and snapshot span when its quote is still there verbatim."""
    passage = (
        Passage.objects.select_related("snapshot").filter(pk=int(anchor.passage_id)).first()
        if str(anchor.passage_id).isdigit()
        else None
    )
    if passage is None or passage.fingerprint != anchor.passage_fingerprint:
        return None
    start, end = anchor.snapshot_span
    if bind_quote(passage.snapshot.text, anchor.quote, start) is None:
        return None
    return passage, start, end


def do_link_anchor(claim: Claim, anchor: Anchor, binding: Binding) -> EvidenceLink:
    """The sentence a claim was mined from, as its anchor link (once per passage)."""
    passage, start, end = binding
    link, _ = EvidenceLink.objects.get_or_create(
        claim=claim,
        passage=passage,
        pool=Pool.SUPPORT,
        defaults={
            "snapshot": passage.snapshot,
            "quote": anchor.quote,
            "quote_start": start,
            "quote_end": end,
            "passage_fingerprint": passage.fingerprint,
            "is_anchor": True,
        },
    )
    return link


def do_link_judged_evidence(
    claim: Claim, verdict: ClaimVerdict, items: Sequence[EvidenceItem]
) -> dict[str, EvidenceLink]:
    """A link (relation, quote, score) for every judged passage whose quote binds.

    Keyed by evidence id; passages the verifier's admission rejected get no link.
    """
    rejected = {r.item.evidence_id for r in verdict.rejected_evidence}
    links: dict[str, EvidenceLink] = {}
    passages = Passage.objects.select_related("snapshot").in_bulk(
        [int(i.passage_id) for i in items if i.evidence_id not in rejected]
    )
    for item in items:
        passage = passages.get(int(item.passage_id)) if item.evidence_id not in rejected else None
        if passage is None:
            continue
        link = _judged_link(claim, passage, item, verdict)
        if link is not None:
            links[item.evidence_id] = link
    return links


def _judged_link(
    claim: Claim, passage: Passage, item: EvidenceItem, verdict: ClaimVerdict
) -> EvidenceLink | None:
    existing = claim.evidence.filter(passage=passage).order_by("-is_anchor", "pk").first()
    quote = verdict.quotes.get(item.evidence_id) or (existing.quote if existing else "")
    span = _span(passage, quote) or _span(passage, _first_sentence(item))
    if span is None:
        return existing
    start, end = span
    relation = verdict.relations.get(item.evidence_id, Relation.INSUFFICIENT)
    fields = {
        "snapshot": passage.snapshot,
        "relation": relation,
        "quote": passage.snapshot.text[start:end],
        "quote_start": start,
        "quote_end": end,
        "passage_fingerprint": passage.fingerprint,
        "score": item.score or None,
    }
    if existing is not None:
        for key, value in fields.items():
            setattr(existing, key, value)
        existing.save(update_fields=list(fields))
        return existing
    return EvidenceLink.objects.create(claim=claim, passage=passage, pool=str(item.pool), **fields)


def _span(passage: Passage, quote: str) -> tuple[int, int] | None:
    if not quote:
        return None
    at = passage.text.find(quote)
    if at < 0:
        return None
    start = passage.start + at
    return bind_quote(passage.snapshot.text, quote, start)


def _first_sentence(item: EvidenceItem) -> str:
    for a, b in item_sentences(item):
        if is_meaningful_quote(item.text[a:b]):
            return item.text[a:b]
    return ""
