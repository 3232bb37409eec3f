"""An audit run end to end: import a cited report, fetch what it cites, check each claim.

A local server plays the web pages the report cites (one of them missing: a fabricated
citation); the fetcher's allow-list names 127.0.0.1 on purpose. The report is written
the way open_deep_research writes one (``[n]`` markers, a ``### Sources`` list).
"""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer
from urllib.parse import urlparse

import pytest

from ledger.models import CitationOutcome, CitedClaim, Claim, SearchHit
from research import runner, services
from research.models import ImportedReport, PlanKind, RunState
from research.services import PlanInvalid
from review.services.decisions import do_approve_claim
from tests.pages import PageHandler

pytestmark = pytest.mark.django_db

PAGES = {
    "/whatsnew": (
        "What's new in Python 3.13",
        "<p>CPython 3.13 adds an experimental build of the interpreter that runs without the "
        "global interpreter lock.</p><p>The free-threaded build is enabled with the "
        "--disable-gil configure option.</p>",
    ),
    "/perf": (
        "Free-threading performance",
        "<p>Single-threaded code runs about 10% slower on the free-threaded build than on "
        "the default build, because of the extra reference-counting work.</p>",
    ),
    "/capi": (
        "C API: free-threading support",
        "<p>Extension modules must declare that they support running without the GIL; "
        "otherwise importing them re-enables the GIL.</p>",
    ),
}

REPORT = """# Free-threaded CPython

CPython 3.13 adds an experimental build that runs without the global interpreter lock [1].
The free-threaded build is enabled with the --disable-gil configure option [1].
Single-threaded code runs about 40% faster on the free-threaded build [2].
Extension modules must declare that they support running without the GIL [3].
The free-threaded build was accepted by the steering council in 2019 [4].
Most popular packages already ship free-threaded wheels.

### Sources
[1] What's new in Python 3.13: {base}/whatsnew
[2] Free-threading performance: {base}/perf
[3] C API: {base}/capi
[4] Steering council decision: {base}/decision
"""


# What the web search finds when the audit looks for better support (SearXNG's JSON API).
FOUND = {
    "/acceptance": (
        "Steering council notes",
        "<p>The steering council accepted the free-threaded build in 2019, after a long "
        "discussion of its costs.</p>",
    ),
}


class Handler(PageHandler):
    pages = PAGES

    def do_GET(self):  # noqa: N802
        url = urlparse(self.path)
        path = url.path
        if path == "/search":
            base = f"http://{self.headers['Host']}"
            results = [
                {"url": f"{base}{p}", "title": t, "content": "", "score": 1.0}
                for p, (t, _) in FOUND.items()
            ]
            return self.send_page(200, "application/json", json.dumps({"results": results}))
        if path in FOUND:
            title, body = FOUND[path]
        elif path not in self.pages:
            return self.send_page(404, "text/plain", "not found")
        else:
            title, body = self.pages[path]
        html = f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        return self.send_page(200, "text/html; charset=utf-8", html + body + "</article></body>")


@pytest.fixture
def base(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.SEARXNG_URL = ""  # no web search: the remediation searches the libraries only
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def audited(author, base):
    plan = services.check_import_report(author, REPORT.format(base=base), filename="odr.md")
    run = services.check_start_run(author, plan, 1, enqueue=False)
    return plan, runner.run_to_end(run.code)


def by_sentence(run) -> dict[int, CitedClaim]:
    return {
        i: cited
        for cited in CitedClaim.objects.filter(claim__run=run).select_related("claim")
        for i in cited.sentences
    }


def test_an_imported_report_becomes_an_audit_plan_that_keeps_the_text(author, base):
    text = REPORT.format(base=base)
    plan = services.check_import_report(author, text, filename="odr.md")
    assert plan.kind == PlanKind.AUDIT and plan.question == "Audit: Free-threaded CPython"
    imported = ImportedReport.objects.get(plan=plan)
    assert imported.text == text and imported.format == "markdown"
    assert len(imported.parsed["sentences"]) == 6


def test_an_audit_run_checks_every_claim_against_what_it_cites(author, base):
    plan, run = audited(author, base)

    assert run.state == RunState.AWAITING_REVIEW, run.error
    hits = SearchHit.objects.filter(run=run, adapter="citation")
    assert hits.count() == 4 and hits.filter(source__isnull=False).count() == 3
    cited = by_sentence(run)
    assert set(cited) == {0, 1, 2, 3, 4, 5}
    # The fabricated citation: its page does not exist, so its claim cannot be checked.
    fabricated = cited[4]
    assert fabricated.outcome == CitationOutcome.UNVERIFIABLE
    assert "404" in fabricated.reason and fabricated.mark == "unverifiable"
    # The uncited sentence is a claim of the audit, marked as such.
    assert cited[5].outcome == CitationOutcome.UNCITED and cited[5].mark == "unsupported"
    # Every claim whose source was read was judged against that source.
    for i in (0, 1, 2, 3):
        assert cited[i].sources.count() == 1
        assert cited[i].outcome in {"supports", "contradicts", "insufficient"}
    assert cited[3].sources.get().url.endswith("/capi")
    assert Claim.objects.filter(run=run, status="pending").count() == 0


def test_a_claim_its_citation_does_not_support_is_searched_for_on_the_web(author, base, settings):
    settings.SEARXNG_URL = base
    plan, run = audited(author, base)

    assert run.state == RunState.AWAITING_REVIEW, run.error
    fabricated = by_sentence(run)[4]
    assert fabricated.remediation["searched"] == ["searxng"]
    assert fabricated.remediation["sources"] == 1
    # one search per claim no source supports: each found the same page, read once
    hits = SearchHit.objects.filter(run=run, adapter="searxng", source__isnull=False)
    urls = set(hits.values_list("source__url", flat=True))
    assert urls == {f"{base}/acceptance"}
    # the page found was judged with the claim's other evidence
    assert fabricated.claim.evidence.filter(passage__source__url=f"{base}/acceptance").exists()


def test_without_a_web_adapter_the_remediation_says_it_searched_the_libraries_only(author, base):
    plan, run = audited(author, base)
    fabricated = by_sentence(run)[4]
    assert fabricated.remediation["searched"] == []
    assert "no web search adapter" in fabricated.remediation["note"]


def test_the_ledger_and_the_claim_page_show_the_citation(author, base, client):
    plan, run = audited(author, base)
    client.force_login(author)
    ledger = client.get(f"/runs/{run.code}/ledger/").content.decode()
    assert "citation" in ledger and "Steering council decision" in ledger
    claim = by_sentence(run)[4].claim
    only = client.get(f"/runs/{run.code}/ledger/?citation=unverifiable").content.decode()
    assert "steering council" in only and "global interpreter lock" not in only
    page = client.get(claim.get_absolute_url()).content.decode()
    assert "What the audited report says" in page
    assert f"{base}/decision could not be fetched" in page


def test_a_report_that_cannot_be_read_is_refused_and_saves_nothing(author):
    with pytest.raises(PlanInvalid):
        services.check_import_report(author, "   \n  ")
    with pytest.raises(PlanInvalid):
        services.check_import_report(author, b"\x00\x01\x02 binary")
    assert not ImportedReport.objects.exists()


def test_the_import_page_keeps_what_was_pasted_when_it_refuses(author, client):
    client.force_login(author)
    page = client.get("/plans/audit/")
    assert page.status_code == 200 and "Audit a report" in page.content.decode()
    refused = client.post("/plans/audit/", {"text": "", "format": "auto"})
    assert refused.status_code == 400 and "Paste the report" in refused.content.decode()
    bad = client.post("/plans/audit/", {"text": '{"text": 3}', "format": "json"})
    assert bad.status_code == 400 and "{&quot;text&quot;: 3}" in bad.content.decode()
    assert not ImportedReport.objects.exists()


def test_a_report_of_an_audit_carries_the_audited_report_in_its_signed_bundle(
    author, reviewer, base, tmp_path
):
    from reports.build import do_build_report
    from reports.export import do_export_report
    from review.services.decisions import do_reject_claim
    from tests.reports.bundles import bundle_problems, rewrite_zip, zip_text

    plan, run = audited(author, base)
    plan.memberships.create(user=reviewer, role="reviewer")
    for claim in Claim.objects.filter(run=run).order_by("pk"):
        if claim.status == "pass":
            do_approve_claim(reviewer, claim, claim.version)
        else:
            do_reject_claim(reviewer, claim, claim.version, "unsupported")
    report = do_build_report(run, author)
    assert report.audited["run"] == str(run.code)

    files = zip_text(do_export_report(report, "zip", author).data)
    audited_md = files["audited/report.md"]
    assert "**[unverifiable: C" not in audited_md  # rejected: the reviewer's word is last
    line = next(li for li in audited_md.splitlines() if "steering council in 2019" in li)
    assert "**[dropped: C" in line
    assert "**[confirmed: C" in audited_md and "audited/report.html" in files
    assert "Most popular packages" not in files["report/report.md"]  # the report proper
    assert "Audit of an imported markdown report (Free-threaded CPython): 6 sentences, 5 " in (
        " ".join(files["report/report.md"].split())
    )
    path = tmp_path / "bundle.zip"
    path.write_bytes(do_export_report(report, "zip", author).data)
    assert bundle_problems(path) == []
    # The audited report is signed like every member: a changed mark is caught.
    forged = tmp_path / "forged.zip"
    forged.write_bytes(
        rewrite_zip(
            path.read_bytes(),
            {"audited/report.md": audited_md.replace("[dropped: C", "[confirmed: C")},
        )
    )
    assert any("audited/report.md" in p for p in bundle_problems(forged))


def test_a_claim_a_reviewer_rejects_as_contradicted_is_marked_contradicted(author, reviewer, base):
    """The families do not find "40% faster" against "10% slower" (they abstain); the
    reviewer, reading the cited source's words on the claim page, rejects the claim as
    contradicted: the audited report marks it so and says who judged. A rejection for
    another reason stays "dropped"."""
    from research.pipeline.audit.check import disposition
    from review.audits import audited_report
    from review.services.decisions import do_reject_claim

    plan, run = audited(author, base)
    plan.memberships.create(user=reviewer, role="reviewer")
    cited = by_sentence(run)
    faster, uncited = cited[2], cited[5]
    assert faster.outcome in {"contradicts", "insufficient"}
    if faster.outcome == "insufficient":  # the reviewer is shown what the source says
        assert "10% slower" in faster.quote
    do_reject_claim(
        reviewer,
        faster.claim,
        faster.claim.version,
        "contradicted",
        'The source says "about 10% slower."',
    )
    do_reject_claim(reviewer, uncited.claim, uncited.claim.version, "unsupported")
    faster.refresh_from_db()
    faster.claim.refresh_from_db()
    assert faster.claim.rejection_code == "contradicted" and faster.mark == "contradicted"

    rows = {row.sentences[0]: row for row in audited_report(run).rows}
    assert rows[2].mark == "contradicted" and rows[2].review == "rejected"
    assert rows[2].reason.startswith(
        'Rejected by a reviewer: Credible evidence contradicts it — The source says "about 10% '
        'slower." Citation check:'  # one full stop, not '…slower.".'
    )
    assert rows[5].mark == "dropped"

    # A later decision that is not a rejection clears the code: the mark follows it.
    claim = faster.claim
    do_approve_claim(reviewer, claim, claim.version, "Re-read: another build is meant.")
    claim.refresh_from_db()
    faster.refresh_from_db()
    assert claim.review_state != "rejected" and claim.rejection_code == ""
    assert faster.mark == disposition(faster.outcome, claim.status)


def test_a_reference_with_a_malformed_doi_is_read_from_its_url():
    from research.pipeline.audit.records import Citation
    from research.stages.audit import citation_key

    page = "https://example.org/perf"
    assert citation_key(Citation("1", url=page, doi="10.1234")) == "url:" + page
    assert citation_key(Citation("1", doi="10.1234")) == ""  # nothing to read it from


LIBRARY_REPORT = """# Heat pumps

A heat pump moves heat from outside air into a building [1].
Ground-source heat pumps draw heat from the soil [2].
The same physics runs a refrigerator [3].
Below two metres the soil stays at one temperature all year [4].
Two proposals share one name [5].

## References
1. Heat pump basics, https://doi.org/10.1234/heat.pumps
2. How ground-source heat pumps work in practice
3. Heat pump basics, https://example.org/mirror ([doi](https://doi.org/10.1234/heat.pumps))
4. Soil temperature below two metres stays stable all year.
5. Multiple interpreters in the standard library
"""


def test_cited_documents_found_in_the_library_are_not_fetched(author, base):
    from ledger.models import Library
    from ledger.services.ingest import DocumentInput, ingest_documents

    library = Library.objects.create(name="heat", owner=author)
    docs = [
        DocumentInput(
            raw=b"Heat pump basics\n\nA heat pump moves heat from outside air into a building.",
            title="Heat pump basics",
            doi="10.1234/heat.pumps",
            content_type="text/plain; charset=utf-8",
        ),
        DocumentInput(
            raw=b"How ground-source heat pumps work in practice\n\nThey draw heat from the soil.",
            title="How ground-source heat pumps work in practice",
            content_type="text/plain; charset=utf-8",
        ),
        *(  # two documents with one title: a reference by that title names neither
            DocumentInput(
                raw=f"Proposal {n}\n\nA proposal about interpreters, version {n}.".encode(),
                title="Multiple interpreters in the standard library",
                content_type="text/plain; charset=utf-8",
            )
            for n in (1, 2)
        ),
        DocumentInput(  # a title stored with its full stop, as many paper titles are
            raw=b"Soil temperature\n\nBelow two metres the soil stays at one temperature.",
            title="Soil temperature below two metres stays stable all year.",
            content_type="text/plain; charset=utf-8",
        ),
    ]
    assert all(r.source_id for r in ingest_documents(docs, library))
    plan = services.check_import_report(author, LIBRARY_REPORT, library=library)
    run = runner.run_to_end(services.check_start_run(author, plan, 1, enqueue=False).code)

    assert run.state == RunState.AWAITING_REVIEW, run.error
    searching = run.checkpoints.get(stage="searching")
    assert searching.counters["in_library"] == 3  # by DOI, and by title (full stop or not)
    assert run.checkpoints.get(stage="ingesting").counters["fetched"] == 0
    cited = by_sentence(run)
    titles = {i: [s.title for s in c.sources.all()] for i, c in cited.items()}
    assert titles[0] == ["Heat pump basics"]
    assert titles[1] == ["How ground-source heat pumps work in practice"]
    assert titles[2] == ["Heat pump basics"]  # another label citing the same DOI
    assert titles[3] == ["Soil temperature below two metres stays stable all year."]
    assert titles[4] == [] and cited[4].outcome == CitationOutcome.UNVERIFIABLE
    assert "several documents of the plan's library have its title" in cited[4].reason
    # The parse's "reference 2 gives no URL" no longer stands once the library had it;
    # reference 5's does.
    from review.audits import audited_report

    assert [f.label for f in audited_report(run).report.findings] == ["5"]  # not read


def test_a_dangling_marker_is_a_finding_on_the_plan_and_in_the_ledger(author, base, client):
    text = REPORT.format(base=base).replace("wheels.", "wheels [9].")
    plan = services.check_import_report(author, text, filename="odr.md")
    client.force_login(author)
    page = client.get(plan.get_absolute_url()).content.decode()
    assert "The report under audit" in page and "dangling-marker" in page
    run = runner.run_to_end(services.check_start_run(author, plan, 1, enqueue=False).code)
    ledger = client.get(f"/runs/{run.code}/ledger/").content.decode()
    assert "dangling-marker" in ledger and "[9] (no such reference)" in ledger
    dangling = by_sentence(run)[5]
    assert dangling.outcome == CitationOutcome.UNVERIFIABLE
    assert "names no reference" in dangling.reason


def test_runplan_audits_a_report_file_and_writes_the_audited_report(author, base, tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    report = tmp_path / "odr.md"
    report.write_text(REPORT.format(base=base))
    out = StringIO()
    call_command(
        "runplan",
        report=report,
        user="author",
        audited=tmp_path / "audited.md",
        stdout=out,
        stderr=StringIO(),
    )
    assert "state: awaiting_review" in out.getvalue()
    audited = (tmp_path / "audited.md").read_text()
    assert audited.startswith("# Audited: Free-threaded CPython")
    assert "**[unverifiable: C" in audited
    empty = tmp_path / "empty.md"
    empty.write_text("   ")
    with pytest.raises(CommandError, match="empty"):
        call_command("runplan", report=empty, user="author", stderr=StringIO())
