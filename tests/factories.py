"""Small builders for test data: real rows in the real database, no mocks.

They write rows directly because they set up a scene; application code writes ledger
rows through services only.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

from django.utils import timezone

from ledger.models import (
    Candidate,
    Claim,
    EvidenceLink,
    Library,
    Passage,
    PassageKind,
    Pool,
    Relation,
    Snapshot,
    Source,
    Verdict,
)
from research.models import Plan, PlanVersion, Run


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_content(question: str = "Does X cause Y?") -> dict[str, Any]:
    return {
        "question": question,
        "subquestions": [
            {
                "key": "sq1",
                "text": "What is the evidence that X causes Y?",
                "dimension": "mechanism",
                "priority": 1,
                "queries": [
                    {"key": "q1", "text": "X causes Y", "query_class": "mechanism"},
                    {"key": "q2", "text": "X does not cause Y", "query_class": "counter-evidence"},
                ],
            }
        ],
        "budgets": {"queries": 20, "documents": 50, "wall_time_s": 600},
    }


def role_for(user: Any) -> str:
    """The plan role the cast's site groups suggest (reviewer > researcher > viewer)."""
    groups = set(user.groups.values_list("name", flat=True))
    return (
        "reviewer" if "reviewer" in groups else "researcher" if "researcher" in groups else "viewer"
    )


def add_member(plan: Plan, user: Any, role: str | None = None) -> None:
    plan.members.add(user, through_defaults={"role": role or role_for(user)})


def make_plan(owner: Any, question: str = "Does X cause Y?", members: tuple[Any, ...] = ()) -> Plan:
    """A plan of ``owner``; each member gets the role their site groups suggest."""
    plan = Plan.objects.create(owner=owner, question=question)
    for member in members:
        add_member(plan, member)
    PlanVersion.create_next(plan, plan_content(question), owner)
    plan.refresh_from_db()
    return plan


def make_run(plan: Plan, state: str = "awaiting_review", **fields: Any) -> Run:
    assert plan.current_version is not None
    return Run.objects.create(plan_version=plan.current_version, state=state, **fields)


def make_snapshot(
    text: str,
    *,
    title: str = "A source",
    canonical_id: str | None = None,
    publisher: str = "",
    cluster: str = "",
) -> Snapshot:
    source = Source.objects.create(
        canonical_id=canonical_id or f"sha256:{sha256(title + text)}",
        title=title,
        publisher=publisher,
        cluster=cluster,
        source_type="paper",
    )
    raw = text.encode("utf-8")
    return Snapshot.objects.create(
        source=source,
        raw=zlib.compress(raw),
        raw_sha256=sha256(text),
        text=text,
        text_sha256=sha256(text),
        content_type="text/plain",
        fetched_at=timezone.now(),
        extractor="test",
    )


def make_passage(
    snapshot: Snapshot,
    start: int = 0,
    end: int | None = None,
    *,
    kind: str = PassageKind.CHUNK,
    ordinal: int = 0,
) -> Passage:
    end = len(snapshot.text) if end is None else end
    text = snapshot.text[start:end]
    return Passage.objects.create(
        snapshot=snapshot,
        source=snapshot.source,
        kind=kind,
        ordinal=ordinal,
        start=start,
        end=end,
        text=text,
        fingerprint=sha256(text),
    )


def make_claim(
    run: Run,
    text: str,
    *,
    status: str = Verdict.PASS,
    quote: str | None = None,
    passage: Passage | None = None,
    pool: str = Pool.SUPPORT,
    relation: str = Relation.SUPPORTS,
    flags: list[str] | None = None,
    **fields: Any,
) -> Claim:
    """A claim with one evidence link whose quote is a real substring of its snapshot."""
    claim = Claim.objects.create(
        run=run,
        text=text,
        fingerprint=sha256(text.lower()),
        status=status,
        flags=flags or [],
        disposition="kept",
        **fields,
    )
    if passage is None:
        passage = make_passage(make_snapshot(f"Background. {quote or text} More text follows."))
    link_evidence(claim, passage, quote or passage.text, pool=pool, relation=relation, anchor=True)
    return claim


def link_evidence(
    claim: Claim, passage: Passage, quote: str, *, pool: str, relation: str, anchor: bool = False
) -> EvidenceLink:
    """``claim`` quoting ``quote`` (found in the passage's snapshot) at its offsets."""
    start = passage.snapshot.text.index(quote)
    return EvidenceLink.objects.create(
        claim=claim,
        passage=passage,
        snapshot=passage.snapshot,
        pool=pool,
        relation=relation,
        quote=quote,
        quote_start=start,
        quote_end=start + len(quote),
        passage_fingerprint=passage.fingerprint,
        score=0.9,
        is_anchor=anchor,
    )


def make_library(name: str = "fixture", owner: Any = None) -> Library:
    """Ownerless: an operator's imported corpus, readable by everyone signed in."""
    return Library.objects.get_or_create(
        name=name, owner=owner, defaults={"public": owner is None}
    )[0]


def make_candidate(
    run: Run,
    text: str,
    *,
    state: str = "dropped",
    reason: str = "a question, not a claim",
    claim: Claim | None = None,
    passage: Passage | None = None,
    **fields: Any,
) -> Candidate:
    """A mining candidate; with ``passage``, bound to its snapshot at the text's offsets."""
    if passage is not None:
        start = passage.snapshot.text.index(text)
        fields |= {
            "passage": passage,
            "snapshot": passage.snapshot,
            "quote": text,
            "quote_start": start,
            "quote_end": start + len(text),
        }
    return Candidate.objects.create(
        run=run,
        text=text,
        fingerprint=sha256(text.lower()),
        state=state,
        reason=reason,
        claim=claim,
        **fields,
    )
