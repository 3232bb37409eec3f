"""No variant of a rejected or unreviewed claim's wording reaches any export (guarantee 8)."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from pypdf import PdfReader

from ledger.models import Verdict
from reports.build import do_build_report
from reports.export import do_export_report
from reports.exports.withheld import REDACTED, WithheldMatcher
from review.services.decisions import do_approve_claim, do_reject_claim
from tests.reports.conftest import APPROVED, claim_from_source

REJECTED = "Vitamin D supplementation reduced hip fractures by 43 percent in older women."
# How a verifier rationale or a reviewer's note may quote the rejected claim.
VARIANTS = {
    "punctuation": "Vitamin D supplementation, reduced hip-fractures by 43 percent in older women",
    "case": "VITAMIN D SUPPLEMENTATION REDUCED HIP FRACTURES BY 43 PERCENT IN OLDER WOMEN.",
    "label prefix": "CONTEXT Vitamin D supplementation reduced hip fractures by 43 percent "
    "in older women.",
    "truncation": "Vitamin D supplementation reduced hip fractures by 43 perc…",
}


def words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def exported_texts(report, author) -> dict[str, str]:
    texts = {}
    for fmt in ("md", "html", "bib", "csl"):
        texts[fmt] = do_export_report(report, fmt, author).data.decode()
    pdf = do_export_report(report, "pdf", author).data
    texts["pdf"] = " ".join(p.extract_text() or "" for p in PdfReader(io.BytesIO(pdf)).pages)
    data = do_export_report(report, "zip", author).data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in archive.namelist():
            if not name.startswith("snapshots/"):
                texts[f"zip:{name}"] = archive.read(name).decode()
    return texts


@pytest.mark.django_db
@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("prefixed", [False, True], ids=["plain-claim", "claim-with-label"])
def test_it_never_exports_a_variant_of_a_rejected_claims_wording(
    run, sub, reviewer, author, variant, prefixed
):
    approved = claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub)
    do_approve_claim(reviewer, approved, approved.version)
    text = f"RESULTS {REJECTED}" if prefixed else REJECTED
    quoted = VARIANTS[variant]
    rejected = claim_from_source(
        run,
        text,
        title="Nursing home trial",
        sub=sub,
        status=Verdict.FAIL,
        rationale=f'The refute pool contradicts "{quoted}" (two trials).',
    )
    do_reject_claim(reviewer, rejected, rejected.version, "other", f"{quoted} — no.")
    assert_no_variant_exported(run, author, quoted)


@pytest.mark.django_db
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_it_never_exports_a_variant_of_an_unreviewed_claims_wording(
    run, sub, reviewer, author, variant
):
    quoted = VARIANTS[variant]
    claim_from_source(
        run,
        REJECTED,
        title="Nursing home trial",
        sub=sub,
        rationale=f'The support pool says "{quoted}" (one trial).',
    )  # left unreviewed: the gate is open, the claim is not reported
    # The approving reviewer's note (Appendix C) quotes the unreviewed claim.
    approved = claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub)
    do_approve_claim(reviewer, approved, approved.version, f"Unlike: {quoted}")
    assert_no_variant_exported(run, author, quoted)


def assert_no_variant_exported(run, author, quoted: str) -> None:
    report = do_build_report(run, author)
    texts = exported_texts(report, author)  # every format exports (no refusal)
    core = words(quoted).removeprefix("context ").removesuffix(" perc")
    assert len(core.split()) >= 8
    for where, body in texts.items():
        assert core not in words(body), where
    assert words(REDACTED) in words(texts["md"])
    assert words(APPROVED[0]) in words(texts["md"])


def test_it_matches_every_variant_and_spares_allowed_words():
    matcher = WithheldMatcher([f"CONTEXT {REJECTED}"], allowed=["vitamin D supplementation"])
    for variant in VARIANTS.values():
        assert matcher.first_leak(f"Reason: {variant} (noted)") is not None, variant
        assert REDACTED in matcher.redact(variant)
    # Six words in a row that an approved string also says are not a leak.
    quote = "In the trial, vitamin D supplementation reduced hip fractures in men."
    spared = WithheldMatcher([REJECTED], allowed=[quote])
    assert spared.first_leak(quote) is None
    assert spared.first_leak("It reduced hip fractures by 43 percent in older women.") is not None
    # A short withheld text matches only whole; an acronym is not a label.
    short = WithheldMatcher(["HIV raises stroke risk."])
    assert short.first_leak("hiv raises stroke risk") is not None
    assert short.first_leak("raises stroke risk") is None
