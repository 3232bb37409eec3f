"""Forms of the review app: the ledger's filters and the three decisions."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from ledger.models import (
    CitationOutcome,
    Claim,
    ClaimType,
    EvidenceLink,
    ReviewState,
    StudyDesign,
    Verdict,
)
from review.services.decisions import REJECT_REASONS
from review.services.gate import BLOCKING, FLAGGED

SORTS: dict[str, tuple[str, tuple[Any, ...]]] = {
    "queue": ("Review order", ("subquestion__position", "pk")),
    "relevance": ("Most relevant", (F("rank").asc(nulls_last=True), "pk")),
    "status": ("Status", ("status", "subquestion__position", "pk")),
    "support": ("Most support", ("-support_count", "pk")),
    "refute": ("Most contradiction", ("-refute_count", "pk")),
    "independent": ("Most independent sources", ("-independent_sources", "pk")),
    "confidence": ("Lowest confidence", ("confidence", "pk")),
    "review": ("Review state", ("review_state", "pk")),
    "text": ("Text A–Z", ("text", "pk")),
}

REVIEW_FILTERS: list[tuple[str, str]] = [
    ("", "Any decision"),
    ("blocking", "Blocking the gate"),
    ("flagged", "To review (not PASS, or flagged)"),
    *[(state.value, str(state.label)) for state in ReviewState],
]


class LedgerFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search")
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *Verdict.choices])
    review = forms.ChoiceField(required=False, choices=REVIEW_FILTERS, label="Decision")
    claim_type = forms.ChoiceField(
        required=False, choices=[("", "Any type"), *ClaimType.choices], label="Type"
    )
    design = forms.ChoiceField(
        required=False, choices=[("", "Any design"), *StudyDesign.choices], label="Design"
    )
    subquestion = forms.CharField(required=False, max_length=40)
    citation = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Any citation check"),
            *[c for c in CitationOutcome.choices if c[0] != CitationOutcome.PENDING],
        ],
        label="Citation",
        help_text="An audit: how the source a claim's sentence cites judged it.",
    )
    sort = forms.ChoiceField(
        required=False, choices=[(key, label) for key, (label, _) in SORTS.items()]
    )

    def apply(self, claims: QuerySet[Claim]) -> QuerySet[Claim]:
        """Filter, search and sort; an invalid form shows the ledger unfiltered."""
        data: dict[str, Any] = self.cleaned_data if self.is_valid() else {}
        if term := (data.get("q") or "").strip():
            quoted = EvidenceLink.objects.filter(
                claim=OuterRef("pk"), passage__text__icontains=term
            )
            claims = claims.filter(Q(text__icontains=term) | Exists(quoted))
        if data.get("status"):
            claims = claims.filter(status=data["status"])
        claims = self._filter_review(claims, data.get("review") or "")
        if data.get("claim_type"):
            claims = claims.filter(claim_type=data["claim_type"])
        if data.get("design"):
            claims = claims.filter(study_design=data["design"])
        if data.get("subquestion"):
            claims = claims.filter(subquestion__key=data["subquestion"])
        if data.get("citation"):
            claims = claims.filter(cited__outcome=data["citation"])
        return claims.order_by(*SORTS[data.get("sort") or "queue"][1])

    @staticmethod
    def _filter_review(claims: QuerySet[Claim], review: str) -> QuerySet[Claim]:
        if review == "blocking":
            return claims.filter(BLOCKING)
        if review == "flagged":
            return claims.filter(FLAGGED)
        return claims.filter(review_state=review) if review else claims


class DecisionForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class ApproveForm(DecisionForm):
    note = forms.CharField(
        required=False,
        max_length=2000,
        label="Reason for the override",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Required to approve a FAIL, UNCERTAIN or UNVERIFIABLE claim: say why the "
        "evidence supports it despite the verdict.",
    )


class NarrowForm(DecisionForm):
    text = forms.CharField(
        label="Narrowed claim",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Say only what the quoted evidence supports.",
    )
    allowed_scope = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Population, setting, period or conditions the claim holds for.",
    )
    prohibited_overstatements = forms.CharField(
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="One per line: what a report must not say on the strength of this claim.",
    )
    reason = forms.CharField(required=False, max_length=2000, label="Why narrow")

    @staticmethod
    def initial_for(claim: Claim) -> dict[str, str]:
        """The claim's text, scope and "must not say", so a narrowing keeps them."""
        return {
            "text": claim.text,
            "allowed_scope": claim.allowed_scope,
            "prohibited_overstatements": "\n".join(claim.prohibited_overstatements or []),
        }

    def prohibited_list(self) -> list[str]:
        raw: str = self.cleaned_data.get("prohibited_overstatements") or ""
        return [line.strip() for line in raw.splitlines() if line.strip()]

    def changed_or_none(self, name: str, claim: Claim) -> str | None:
        """The posted value, or None when the field was not posted or is what the claim
        already says (the service then carries the claim's own over)."""
        if name not in self.data:
            return None
        value: str = (self.cleaned_data.get(name) or "").strip()
        return None if value == self.initial_for(claim)[name].strip() else value

    def prohibited_or_none(self, claim: Claim) -> list[str] | None:
        if "prohibited_overstatements" not in self.data:
            return None
        given = self.prohibited_list()
        return None if given == list(claim.prohibited_overstatements or []) else given


class RejectForm(DecisionForm):
    reason_code = forms.ChoiceField(
        label="Reason", choices=[("", "Choose a reason…"), *REJECT_REASONS]
    )
    reason = forms.CharField(
        required=False,
        max_length=2000,
        label="Details",
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def clean(self) -> dict[str, Any] | None:
        data = super().clean() or {}
        if data.get("reason_code") == "other" and not (data.get("reason") or "").strip():
            self.add_error("reason", "Explain the reason when you choose “Other”.")
        return data
