"""Review the vitamin D run as a researcher would, through the review services, then build
and export its report.

Run from a worktree (SciFact snapshot in .data/pg, the vitamin D run done):

    .venv/bin/python manage.py shell -c \\
      "exec(open('docs/bench/report/review_vitamin_d.py').read()); main('RUN', 'OUT')"

How the decisions are made (the same rules a reviewer applies reading the ledger):

1. A claim that does not bear on the question — nothing about vitamin D, or vitamin D
   with no bone, fracture, fall or older-adult outcome — is rejected as out of scope.
2. A claim that states a study's aim, design or method rather than a finding is rejected
   ("other": not a finding).
3. A FAIL claim is rejected as contradicted (the verifiers found credible contradicting
   evidence; approval is refused anyway).
4. An on-topic finding the verifiers PASSed is approved.
5. An on-topic UNCERTAIN finding is approved only when its own source sentence states
   it (the anchor quote equals the claim) and it is a result, with a written reason;
   otherwise rejected as unsupported.
6. ``DECISIONS`` overrides rules 1–5 for named claims (by a distinctive piece of their
   text) after reading them: approve, reject with a reason, or narrow to a stated text.

Every decision goes through ``review.services`` (approval rules, second-reviewer rule,
re-verification of narrowed text), exactly as the web does. The report is built by the
synthesizing stage (``check_request_report`` + one worker step), so the run ends Done.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from ledger.models import Claim, Verdict
from reports.build import check_request_report
from reports.export import do_export_report
from research import runner
from research.models import Run
from review.services.decisions import (
    DecisionRefused,
    approval_refusal,
    do_approve_claim,
    do_narrow_claim,
    do_reject_claim,
)
from review.services.gate import gate_policy, ledger_claims, review_order

TOPIC = re.compile(r"vitamin d|25\(oh\)d|25-hydroxyvitamin|cholecalciferol|ergocalciferol", re.I)
OUTCOME = re.compile(r"fractur|fall|bone|osteopor|elderly|older|aged|postmenopausal", re.I)
METHOD = re.compile(
    r"^(?:we |this (?:study|review)|the (?:aim|objective|purpose|main outcome)|to (?:study|"
    r"estimate|determine|assess|evaluate|investigate)|objective|design|methods?\b|"
    r"(?:a |an )?(?:randomi[sz]ed|nested|prospective|retrospective|pragmatic)\b[^.]*"
    r"(?:was|were) (?:conducted|performed|carried out)|[^.]* (?:was|were) (?:measured|"
    r"performed|assessed|defined as|recorded|collected))",
    re.I,
)

# Decisions taken after reading particular claims: (piece of text, action, reason / text).
DECISIONS: list[tuple[str, str, str]] = []


def decide(claim: Claim) -> tuple[str, str]:
    """(action, reason or narrowed text) for one claim, by the rules above."""
    for piece, action, detail in DECISIONS:
        if piece.lower() in claim.text.lower():
            return action, detail
    text = claim.text
    if not TOPIC.search(text) or not OUTCOME.search(text):
        return "reject:out-of-scope", "not about vitamin D and bone, fracture or fall outcomes"
    if METHOD.search(text):
        return "reject:other", "states the study's aim, design or method, not a finding"
    if claim.status == Verdict.FAIL:
        return "reject:contradicted", "the verifiers found credible contradicting evidence"
    if claim.status == Verdict.PASS:
        return "approve", ""
    anchor = claim.evidence.filter(is_anchor=True).first()
    if anchor is not None and anchor.quote.strip() == text.strip():
        return "approve", "the source states it verbatim; a single study's result"
    return "reject:unsupported", "no quote states it"


def apply(claim: Claim, user: Any, action: str, detail: str) -> str:
    claim.refresh_from_db()
    if action == "approve":
        do_approve_claim(user, claim, claim.version, note=detail)
    elif action.startswith("reject:"):
        do_reject_claim(user, claim, claim.version, action.split(":", 1)[1], detail)
    elif action == "narrow":
        do_narrow_claim(user, claim, claim.version, detail, reason="narrowed to the quote")
        claim.refresh_from_db()
        refusal = approval_refusal(claim, user, gate_policy(claim.run.plan_version.plan))
        if refusal:
            do_reject_claim(user, claim, claim.version, "unsupported", refusal)
            return "narrow+reject"
        do_approve_claim(user, claim, claim.version, note="narrowed text re-verified")
        return "narrow+approve"
    return action


def main(run_code: str, out_dir: str, username: str = "runplan") -> None:
    user = get_user_model().objects.get(username=username)
    run = Run.objects.get(code=run_code)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = []
    for claim in review_order(ledger_claims(run)):
        if claim.decisions.exists():
            continue
        action, detail = decide(claim)
        try:
            done = apply(claim, user, action, detail)
        except DecisionRefused as exc:
            do_reject_claim(user, claim, claim.version, "unsupported", str(exc)[:200])
            done = f"refused ({exc}); rejected"
        log.append(
            {
                "claim": str(claim.code),
                "status": claim.status,
                "text": claim.text,
                "action": done,
                "detail": detail,
            }
        )
    (out / "decisions.json").write_text(json.dumps(log, indent=1))
    check_request_report(user, run, enqueue=False)
    run = runner.run_to_end(run.code)
    report = run.latest_report
    for fmt in ("md", "html", "pdf", "zip", "bib", "csl"):
        export = do_export_report(report, fmt, user)
        (out / export.filename).write_bytes(export.data)
    print("state", run.state, "report", report.code, "claims", len(report.claim_codes))
