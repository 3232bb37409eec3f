"""The ledger, the mining candidates, the claim capsule with its decisions, the audit trail
and snapshot views."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import F, QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_POST

from ledger.models import Candidate, CandidateState, Claim, EvidenceLink
from ledger.readers import (
    candidate_counts,
    contested_pairs,
    contested_partners,
    counter_record,
    evidence_gaps,
    found_elsewhere,
)
from research.http import AuthedHttpRequest
from research.models import Run
from research.pipeline.counter import CounterRecord
from research.pipeline.verify.records import PoolName
from research.services import get_run_for_user, imported_summary
from review import fragments
from review.audited import render_html as render_audited_html
from review.audited import render_markdown as render_audited_markdown
from review.audits import NotAnAudit, audited_report
from review.forms import ApproveForm, LedgerFilterForm, NarrowForm, RejectForm
from review.readers import (
    evidence_pools,
    next_blocking,
    queue_neighbours,
    run_decisions,
    subquestion_counts,
)
from review.services.access import can_decide, get_claim_for_user
from review.services.capsules import last_approval
from review.services.decisions import (
    REJECT_REASONS,
    DecisionConflict,
    DecisionRefused,
    approval_refusal,
    do_approve_claim,
    do_bulk_approve,
    do_narrow_claim,
    do_reject_claim,
    is_override,
    last_narrowing,
    pending_override,
)
from review.services.gate import GateStatus, gate_policy, gate_status, ledger_claims
from review.shadow import DECISIONS, VERDICTS, run_agreement

LEDGER_PAGE_SIZE = 50
CANDIDATE_PAGE_SIZE = 100
# Why a candidate was set aside: filter key -> (label, how its reason begins).
DROP_KINDS = {
    "off-topic": ("Off-topic", "off-topic"),
    "off-outcome": ("Off-outcome", "off-outcome"),
    "scope": ("Outside the scope", "outside the scope"),
    "budget": ("Over the claim budget", "over the claim budget"),
}


# --- ledger ---------------------------------------------------------------------------


@require_GET
def show_ledger(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """The run's claims, filtered and paged; the parts that do not depend on the user are
    kept rendered under the run's fingerprint (``review.fragments``)."""
    with fragments.one_snapshot():
        run = get_run_for_user(request.user, code)
        fingerprint = fragments.run_fingerprint(run)
        form = LedgerFilterForm(request.GET)
        table = _ledger_table(request, run, form, fingerprint)
        if request.htmx:  # the table alone: no gate, counts or form to compute
            return HttpResponse(table)
        plan = run.plan_version.plan
        context: dict[str, Any] = {
            "run": run,
            "plan": plan,
            "form": form,
            "filter_fields": fragments.cached_html(
                fragments.key("ledger-filter", plan.kind, request.GET.urlencode()),
                lambda: render_to_string(
                    "review/_ledger_filter.html", {"form": form, "audit": plan.kind == "audit"}
                ),
            ),
            "table": table,
            "gate": _gate(run, fingerprint),
            "imported": imported_summary(plan) if plan.kind == "audit" else None,
            "subquestion_table": fragments.cached_html(
                fragments.key(fingerprint, "subquestion-counts"),
                lambda: render_to_string(
                    "review/_subquestion_counts.html",
                    {"subquestions": _with_every_subquestion(run, subquestion_counts(run))},
                ),
            ),
            "candidates": candidate_counts(run),
            "can_decide": can_decide(request.user, plan),
            "gaps": evidence_gaps(run),
            "pairs": contested_pairs(run),
        }
        return render(request, "review/ledger.html", context)


def _ledger_table(
    request: AuthedHttpRequest, run: Run, form: LedgerFilterForm, fingerprint: str
) -> SafeString:
    """The page of the ledger table the query asks for.

    A search (``q``) also reads passage texts, which the run's fingerprint does not
    cover, so a search result is rendered every time.
    """
    query = _query_without(request, "page")
    page_number = request.GET.get("page")

    def render_table() -> str:
        claims = form.apply(ledger_claims(run)).select_related("subquestion", "cited")
        page = Paginator(claims, LEDGER_PAGE_SIZE).get_page(page_number)
        page.object_list = list(page.object_list)
        partners = contested_partners(page.object_list)
        for claim in page.object_list:
            claim.contests = partners.get(claim.pk, [])  # type: ignore[attr-defined]
        return render_to_string("review/_ledger_table.html", {"page": page, "query": query})

    if (request.GET.get("q") or "").strip():
        return mark_safe(render_table())  # noqa: S308 (rendered by the template engine)
    return fragments.cached_html(
        fragments.key(fingerprint, "ledger-table", query, page_number), render_table
    )


def _gate(run: Run, fingerprint: str) -> GateStatus:
    """The synthesis gate: a function of the run's state and claims, so of its fingerprint."""
    return fragments.cached(fragments.key(fingerprint, "gate"), lambda: gate_status(run))


def _with_every_subquestion(run: Run, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Claim counts per subquestion, subquestions without a claim of their own included,
    each with how many claims of other subquestions its search found too."""
    elsewhere = found_elsewhere(run)
    seen = {row["subquestion__key"] for row in rows}
    for sq in run.plan_version.subquestions.order_by("position"):
        if sq.key not in seen:
            rows.append(
                {
                    "subquestion__key": sq.key,
                    "subquestion__text": sq.text,
                    "subquestion__position": sq.position,
                    **dict.fromkeys(("total", "flagged", "blocking", "approved", "rejected"), 0),
                }
            )
    rows.sort(
        key=lambda row: (row["subquestion__position"] is None, row["subquestion__position"] or 0)
    )
    for row in rows:
        row["found_elsewhere"] = elsewhere.get(row["subquestion__key"], 0)
    return rows


# --- candidates -----------------------------------------------------------------------


@require_GET
def show_candidates(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """Everything the claim miner considered for a run, by subquestion, with the reasons."""
    run = get_run_for_user(request.user, code)
    state = request.GET.get("state", "")
    if state not in CandidateState.values:
        state = ""
    why = request.GET.get("why", "")
    if why not in DROP_KINDS:
        why = ""
    rows = run_candidates(run, state)
    if why:
        rows = rows.filter(reason__startswith=DROP_KINDS[why][1])
    page = Paginator(rows, CANDIDATE_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "run": run,
        "plan": run.plan_version.plan,
        "page": page,
        "state": state,
        "why": why,
        "whys": [(key, label) for key, (label, _) in DROP_KINDS.items()],
        "states": CandidateState.choices,
        "counts": candidate_counts(run),
        "query": _query_without(request, "page"),
    }
    return render(request, "review/candidates.html", context)


def run_candidates(run: Run, state: str = "") -> QuerySet[Candidate]:
    """The run's candidates in subquestion order; snapshot texts are not loaded."""
    rows = (
        Candidate.objects.filter(run=run)
        .select_related("subquestion", "claim", "snapshot__source")
        .defer("snapshot__text", "snapshot__raw", "snapshot__http_headers")
        .order_by(F("subquestion__position").asc(nulls_last=True), "subquestion__key", "pk")
    )
    return rows.filter(state=state) if state else rows


def _query_without(request: AuthedHttpRequest, *keys: str) -> str:
    query = request.GET.copy()
    for key in keys:
        query.pop(key, None)
    return query.urlencode()


@require_GET
def show_queue(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """Start (or resume) the review queue at the first claim still blocking the gate."""
    run = get_run_for_user(request.user, code)
    return _to_next(request, run, None)


@require_POST
def approve_claims(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """Bulk-approve the run's unflagged PASS claims."""
    run = get_run_for_user(request.user, code)
    try:
        count = do_bulk_approve(request.user, run)
    except DecisionRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Approved {count} unflagged PASS claim(s).")
    return redirect("review-show-ledger", run.code)


@require_GET
def show_audit(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    run = get_run_for_user(request.user, code)
    labels = dict(REJECT_REASONS)
    decisions = list(run_decisions(run))
    for decision in decisions:
        decision.reason_label = labels.get(decision.reason_code, decision.reason_code)  # type: ignore[attr-defined]
    context = {"run": run, "decisions": decisions, "gate": gate_status(run)}
    return render(request, "review/audit.html", context)


@require_GET
def show_shadow(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """Shadow vs counted verdicts vs reviewer decisions for one run."""
    run = get_run_for_user(request.user, code)
    agreement = run_agreement(run)
    verification = run.counters.get("verification", {})
    context = {
        "run": run,
        "a": agreement,
        "agree": agreement.agreement(agreement.decisions),
        "shadow_agree": agreement.agreement(agreement.shadow_decisions),
        "verdicts": [str(v) for v in VERDICTS],
        "decision_names": DECISIONS,
        "decision_rows": _rows(agreement.decisions, DECISIONS),
        "shadow_rows": _rows(agreement.shadow_vs_counted, [str(v) for v in VERDICTS]),
        "families": verification.get("families", {}),
        "quorum": verification.get("quorum"),
        "unavailable": verification.get("unavailable", {}),
    }
    return render(request, "review/shadow.html", context)


def _rows(table: dict[str, dict[str, int]], columns: list[str]) -> list[tuple[str, list[int]]]:
    return [
        (str(v), [table.get(str(v), {}).get(c, 0) for c in columns])
        for v in VERDICTS
        if str(v) in table
    ]


# --- capsule --------------------------------------------------------------------------


@require_GET
def show_claim(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    with fragments.one_snapshot():
        claim = get_claim_for_user(request.user, code)
        return _render_claim(request, claim, fresh=True)


def _render_claim(
    request: AuthedHttpRequest,
    claim: Claim,
    forms: dict[str, Any] | None = None,
    error: str = "",
    status: int = 200,
    *,
    fresh: bool = False,
) -> HttpResponse:
    """The capsule page; after a failed decision it keeps what the reviewer typed.

    The capsule itself (the claim, its evidence, votes, counter-evidence searched and
    decision history) does not depend on who reads it, and is kept rendered under the
    claim's fingerprint; the gate and queue position under the run's. What depends on
    the reader (may they decide, why may they not approve, the forms) is computed here.
    """
    with fragments.one_snapshot():
        if not fresh:
            claim.refresh_from_db()
        run = claim.run
        plan = run.plan_version.plan
        run_print, claim_print = fragments.fingerprints(run, claim)
        capsule = fragments.cached(
            fragments.key(claim_print, "capsule"), lambda: _capsule_parts(claim)
        )
        narrowing = last_narrowing(claim) if capsule["narrowed"] else None
        may_decide = can_decide(request.user, plan)
        initial = {"version": claim.version}
        context: dict[str, Any] = {
            "claim": claim,
            "run": run,
            "capsule": capsule,
            "narrowing": narrowing,
            "approve_refusal": (
                approval_refusal(claim, request.user, gate_policy(plan))
                if may_decide or narrowing
                else None
            ),
            "override": is_override(claim),
            # Other claims' text and verdict: not in the claim's fingerprint, read each time.
            "contests": contested_partners([claim]).get(claim.pk, []),
            "can_decide": may_decide,
            "gate": _gate(run, run_print),
            "nav": fragments.cached(
                fragments.key(run_print, "queue", claim.pk),
                lambda: queue_neighbours(claim),
            ),
            "approve_form": ApproveForm(initial=initial),
            "narrow_form": NarrowForm(initial={**initial, **NarrowForm.initial_for(claim)}),
            "reject_form": RejectForm(initial=initial),
            "error": error,
            "open_form": "",
        }
        for name, form in (forms or {}).items():
            context[name] = form
            context["open_form"] = name
        if context["override"] and not context["approve_refusal"]:
            # The browser asks for the reason before posting; the "a" key focuses the field.
            context["approve_form"].fields["note"].widget.attrs["required"] = True
        _refresh_versions(context, claim.version)
        for name in ("narrow", "reject"):  # unbound, they follow from the claim's row alone
            form = context[f"{name}_form"]
            context[f"{name}_fields"] = (
                form.as_div()
                if form.is_bound
                else fragments.cached_html(fragments.key(claim_print, name), form.as_div)
            )
        return render(request, "review/claim.html", context, status=status)


def _capsule_parts(claim: Claim) -> dict[str, Any]:
    """The capsule's reader-independent parts, rendered: the claim article, the evidence
    (pools, counter-evidence searched, votes, decision history) and where the first quote
    is (the "open evidence" shortcut)."""
    pools = evidence_pools(claim)
    first = next((item for items in pools.values() for item in items), None)
    context: dict[str, Any] = {
        "claim": claim,
        "pools": pools,
        "votes": claim.votes.select_related("evidence__snapshot__source").order_by(
            "shadow", "verifier", "pk"
        ),
        "counter": counter_summary(counter_record(claim)),
        "decisions": claim.decisions.select_related("reviewer", "carried_from__claim").order_by(
            "created_at", "pk"
        ),
        "narrowed": last_narrowing(claim) is not None,
        "approval": last_approval(claim),
        "pending_override": pending_override(claim),
    }
    return {
        "narrowed": context["narrowed"],
        "article": mark_safe(render_to_string("review/_capsule_article.html", context)),  # noqa: S308
        "evidence": mark_safe(render_to_string("review/_capsule_evidence.html", context)),  # noqa: S308
        "first_evidence": (
            None if first is None else (first.link.snapshot.code, first.link.quote_start)
        ),
    }


def counter_summary(record: CounterRecord | None) -> dict[str, Any]:
    """What the counter-evidence stage searched for a claim, ready for the capsule page.

    ``state`` is ``pending`` (the stage has not run), ``unavailable`` (it ran without
    retrieval; ``why`` says so) or ``gathered`` (``queries`` and ``pools`` as sizes).
    """
    if record is None:
        return {"state": "pending"}
    if record.unavailable:
        return {"state": "unavailable", "why": record.unavailable}
    return {
        "state": "gathered",
        "queries": record.queries,
        "pools": [(str(name), len(record.pool(name))) for name in PoolName],
    }


def _refresh_versions(context: dict[str, Any], version: int) -> None:
    """A re-shown form keeps the reviewer's text but carries the claim's current version."""
    for name in ("approve_form", "narrow_form", "reject_form"):
        form = context[name]
        if form.is_bound:
            data = form.data.copy()
            data["version"] = str(version)
            form.data = data


@require_POST
def approve_claim(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    claim = get_claim_for_user(request.user, code, write=True)
    form = ApproveForm(request.POST)
    if not form.is_valid():
        return _render_claim(request, claim, {"approve_form": form}, status=400)
    try:
        decision = do_approve_claim(
            request.user, claim, form.cleaned_data["version"], form.cleaned_data["note"]
        )
    except DecisionRefused as exc:
        return _refused(request, claim, exc, {"approve_form": form})
    claim.refresh_from_db(fields=["review_state"])
    if claim.review_state == "overriding":
        messages.info(request, "Override recorded: a second reviewer must confirm it.")
    elif decision.override:
        messages.success(request, f"Approved as an override of {decision.verdict_at_decision}.")
    else:
        messages.success(request, "Approved.")
    return _to_next(request, claim.run, claim)


@require_POST
def narrow_claim(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    claim = get_claim_for_user(request.user, code, write=True)
    form = NarrowForm(request.POST)
    if not form.is_valid():
        return _render_claim(request, claim, {"narrow_form": form}, status=400)
    data = form.cleaned_data
    try:
        decision = do_narrow_claim(
            request.user,
            claim,
            data["version"],
            data["text"],
            allowed_scope=form.changed_or_none("allowed_scope", claim),
            prohibited_overstatements=form.prohibited_or_none(claim),
            reason=data["reason"],
        )
    except DecisionRefused as exc:
        return _refused(request, claim, exc, {"narrow_form": form})
    verdict = decision.reverified.status or "not available"
    messages.info(request, f"Narrowed. Re-verification of the new text: {verdict.upper()}.")
    return redirect("review-show-claim", claim.code)


@require_POST
def reject_claim(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    claim = get_claim_for_user(request.user, code, write=True)
    form = RejectForm(request.POST)
    if not form.is_valid():
        return _render_claim(request, claim, {"reject_form": form}, status=400)
    data = form.cleaned_data
    try:
        do_reject_claim(request.user, claim, data["version"], data["reason_code"], data["reason"])
    except DecisionRefused as exc:
        return _refused(request, claim, exc, {"reject_form": form})
    messages.success(request, "Rejected.")
    return _to_next(request, claim.run, claim)


def _refused(
    request: AuthedHttpRequest,
    claim: Claim,
    exc: DecisionRefused,
    forms: dict[str, Any],
) -> HttpResponse:
    status = 409 if isinstance(exc, DecisionConflict) else 422
    return _render_claim(request, claim, forms, error=str(exc), status=status)


def _to_next(request: AuthedHttpRequest, run: Run, after: Claim | None) -> HttpResponse:
    """On to the next claim blocking the gate, or back to the ledger when none is left."""
    code = next_blocking(run, after)
    if code is None:
        messages.success(request, gate_status(run).reason)
        return redirect("review-show-ledger", run.code)
    return redirect(reverse("review-show-claim", args=[code]))


@require_GET
def show_snapshot(request: AuthedHttpRequest, code: UUID, snapshot: UUID) -> HttpResponse:
    """The full snapshot text a quote of this claim comes from, the quote highlighted."""
    claim = get_claim_for_user(request.user, code)
    links = (
        claim.evidence.select_related("snapshot__source", "passage")
        .filter(snapshot__code=snapshot)
        .order_by("-is_anchor", "pk")
    )
    chosen = _pick_link(list(links), request.GET.get("at", ""))
    if chosen is None:
        raise Http404("This snapshot is not evidence for this claim.")
    text = chosen.snapshot.text
    context = {
        "claim": claim,
        "link": chosen,
        "snapshot": chosen.snapshot,
        "before": text[: chosen.quote_start],
        "quote": text[chosen.quote_start : chosen.quote_end],
        "after": text[chosen.quote_end :],
        "source_url": _web_url(chosen.snapshot.source.url),
    }
    return render(request, "review/snapshot.html", context)


def _web_url(url: str) -> str:
    """Only http(s) links are clickable: a ``javascript:`` URL in source data stays text."""
    return url if url.lower().startswith(("http://", "https://")) else ""


def _pick_link(links: list[EvidenceLink], at: str) -> EvidenceLink | None:
    """The evidence link starting at offset ``at`` if given, else the first one."""
    for link in links:
        if at and str(link.quote_start) == at:
            return link
    return links[0] if links else None


AUDITED_FORMATS = {
    "md": ("text/markdown; charset=utf-8", render_audited_markdown),
    "html": ("text/html; charset=utf-8", render_audited_html),
}


@require_GET
def export_audited(request: AuthedHttpRequest, code: UUID, fmt: str) -> HttpResponse:
    """The audited report of an audit run (``review.audited``): the imported
    report's own text, every sentence marked, with the disposition ledger."""
    run = get_run_for_user(request.user, code)
    if fmt not in AUDITED_FORMATS:
        raise Http404("Formats: md, html.")
    try:
        audit = audited_report(run)
    except NotAnAudit as exc:
        raise Http404(str(exc)) from exc
    content_type, render_audit = AUDITED_FORMATS[fmt]
    response = HttpResponse(render_audit(audit), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="audited-{run.code}.{fmt}"'
    return response
