"""The stages of an audit run: an imported report's claims, each judged against what it cites.

An audit plan (``PlanContent.kind == "audit"``) carries an imported report
(``research.models.ImportedReport``: its text and its parse). Its run goes through the
same states as a research run; three of them do the audit's own work:

1. **searching** — :func:`cite`: every citation the report makes becomes a SearchHit of
   the ``citation`` adapter: matched to a document of the plan's library (by DOI, arXiv
   id, URL or exact title) or, failing that, to be fetched through the SSRF-guarded fetcher by the
   ordinary ingest stage (which snapshots it). A reference with nothing to fetch (no
   link, no identifier, no library match) is recorded as unreadable, with why. The
   plan's own queries, if the researcher added any, are searched after it as usual.
2. **mining** — :func:`mine`: each sentence of the report is atomized into claims
   (mining's clause split), each bound to the citations of its sentence
   (``ledger.CitedClaim``). A sentence that cites nothing and states no finding (an aim,
   a method, background, a question) is not a claim; every other sentence is, cited or
   not (an uncited claim is a finding of the audit).
3. **verifying** — :func:`verify`: per claim, (a) the citation check: the claim against
   the passages of the sources its sentence cites, and nothing else — the nearest ones and
   those the support and counter-evidence searches found
   (``research.pipeline.audit.check.check_citation``); (b) the ordinary verdict: the
   cited passages and the support and counter-evidence the counter-evidence stage found
   in the run's libraries, together; (c) when neither supports the claim, one remediation
   search of the web adapters (:func:`remediate`, ``REMEDIATION_HITS`` results each,
   fetched and snapshotted) and the verdict again. A claim its citation does not support
   but other evidence does is *re-sourced* (``check.disposition``).

Counter-evidence (between mining and verifying) and review are those of any run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.db import transaction
from django.db.models import Q
from pgvector.django import CosineDistance

from ledger.models import (
    CitationOutcome,
    CitedClaim,
    Claim,
    DispositionState,
    Library,
    Passage,
    SearchHit,
    Source,
    Verdict,
)
from ledger.readers import claim_input, evidence_item, gathered_pools, in_context
from ledger.services.dispositions import do_dispose
from ledger.services.library import plan_may_search
from ledger.services.search_hits import FoundHit, do_record_search_hits
from ledger.services.verdicts import do_record_verdict
from research.models import ImportedReport, Run, RunState, StageCheckpoint, Subquestion
from research.pipeline.audit.check import SUPPORTS, check_citation
from research.pipeline.audit.records import Citation, ParsedReport
from research.pipeline.claims.classify import describe
from research.pipeline.claims.mine import split_coordination
from research.pipeline.claims.roles import classify_sentences
from research.pipeline.identity import lenient_canonical_id, normalize_url
from research.pipeline.language.lexicon import content_stems
from research.pipeline.records import PlanContent
from research.pipeline.text import claim_fingerprint
from research.pipeline.verify import Encode, VerifyConfig, verify_claim
from research.pipeline.verify.records import EvidenceItem, PoolName, Pools, Status
from research.providers.fetcher import FetchOptions, FetchPool
from research.services.runs import do_count_verification
from research.stages import adapters
from research.stages.base import StageContext
from research.stages.ingest import ingest_page

ADAPTER = "citation"
CITED_PASSAGES = 3  # passages of a cited source a claim is judged against
REMEDIATION_HITS = 3  # results per web adapter of a claim's remediation search
MIN_TITLE_MATCH = 20  # characters a reference's title needs to name a library document
TIME_SENSITIVE = ("current-state", "fast-changing")


def is_audit(plan: PlanContent) -> bool:
    return plan.kind == "audit"


def report_of(run: Run) -> ParsedReport:
    """The parse of the report the run's plan audits."""
    imported = ImportedReport.objects.get(plan_id=run.plan_version.plan_id)
    return ParsedReport.from_json(imported.parsed)


# --- 1. searching: the report's citations, matched or to be fetched ----------------------


def citation_key(citation: Citation) -> str:
    """One identity per cited document (its canonical id), "" when nothing identifies it. A
    malformed DOI or arXiv id beside a URL falls back to the URL: the page is still read."""
    return lenient_canonical_id(citation.url, citation.doi, citation.arxiv_id) or ""


def fetch_url(citation: Citation) -> str:
    """Where a cited document is fetched from: its URL, else its DOI or arXiv landing page."""
    if citation.url:
        return citation.url
    if citation.doi:
        return f"https://doi.org/{citation.doi}"
    if citation.arxiv_id:
        return f"https://arxiv.org/abs/{citation.arxiv_id}"
    return ""


class LibraryIndex:
    """The plan library's documents as a citation names them: by canonical id, DOI, arXiv
    id, URL (normalized; the library's URLs are read once, on the first citation with a
    URL) or exact title."""

    def __init__(self, library: Library) -> None:
        self.sources = Source.objects.filter(libraries=library)
        self._urls: dict[str, Source] | None = None

    def by_url(self, url: str) -> Source | None:
        if self._urls is None:
            self._urls = {}
            for source in self.sources.exclude(url=""):  # newest first, as the library lists
                self._urls.setdefault(normalize_url(source.url), source)
        return self._urls.get(normalize_url(url))


def library_match(
    index: LibraryIndex | None, citation: Citation, key: str
) -> tuple[Source | None, str]:
    """The plan library's document the citation names: by canonical id, DOI, arXiv id or
    URL, else by its exact title (case aside; a title this short is no identity). A title
    that several documents carry names none of them: (None, why)."""
    if index is None:
        return None, ""
    sources = index.sources
    found = sources.filter(canonical_id=key).first() if key else None
    if found is None and citation.doi:
        found = sources.filter(doi__iexact=citation.doi).first()
    if found is None and citation.arxiv_id:
        found = sources.filter(arxiv_id=citation.arxiv_id).first()
    if found is None and citation.url:
        found = index.by_url(citation.url)
    title = " ".join(citation.title.split()).rstrip(" .")
    if found is None and len(title) >= MIN_TITLE_MATCH:  # "Title" or "Title." as stored
        same = Q(title__iexact=title) | Q(title__iexact=title + ".")
        matches = list(sources.filter(same).order_by("pk")[:2])
        if len(matches) > 1:
            return None, (
                f"reference {citation.label} names no URL, DOI or arXiv id, and several "
                f"documents of the plan's library have its title ({title!r}): which one it "
                "cites cannot be told"
            )
        found = matches[0] if matches else None
    return found, ""


def cite(ctx: StageContext) -> None:
    """Record a hit per cited document (round 0 only; a resumed stage records nothing twice)."""
    if ctx.round or ctx.cursor.get("cited"):
        return
    report = report_of(ctx.run)
    plan = ctx.run.plan_version.plan
    searchable = plan.library and plan_may_search(plan, plan.library)
    index = LibraryIndex(plan.library) if searchable and plan.library else None
    hits: list[FoundHit] = []
    seen: set[str] = set()
    unreadable: dict[str, str] = {}
    matched = 0
    cited = {c.label: c for sentence in report.sentences for c in sentence.citations}
    labels: dict[str, str] = {}  # citation label -> the canonical id of what it cites
    for citation in cited.values():
        key = citation_key(citation)
        # Identifiers that did not make the key (malformed: it fell back to the URL) are
        # not handed on, so ingesting the page does not stumble on them again.
        identified = key.startswith(("doi:", "arxiv:"))
        source, ambiguous = library_match(index, citation, key)
        if source is not None:
            key = source.canonical_id
        if not key:
            unreadable[citation.label] = ambiguous or (
                f"reference {citation.label} names no URL, DOI or arXiv id and matches no "
                "document of the plan's library"
            )
            continue
        labels[citation.label] = key
        if key in seen:  # another label cites the same document
            continue
        seen.add(key)
        matched += source is not None
        record = {
            "url": fetch_url(citation),
            "title": citation.title,
            "doi": citation.doi if identified else "",
            "arxiv_id": citation.arxiv_id if identified else "",
            "citation": citation.label,
        }
        hits.append(
            FoundHit(
                rank=len(hits) + 1,
                score=None,
                canonical_id=key,
                record=record,
                source_id=source.pk if source else None,
            )
        )
    do_record_search_hits(
        ctx.run,
        query_key="",
        query_text="the imported report's citations",
        adapter=ADAPTER,
        hits=hits,
    )
    ctx.save_cursor(cited=True, unreadable=unreadable, labels=labels)
    ctx.count(cited_documents=len(hits), in_library=matched, to_fetch=len(hits) - matched)
    if unreadable:
        ctx.note(
            "citations",
            f"{len(unreadable)} reference(s) cannot be read: "
            + "; ".join(list(unreadable.values())[:3]),
        )


# --- 2. mining: claims bound to their sentence's citations --------------------------------


def cited_sources(run: Run) -> tuple[dict[str, int], dict[str, str]]:
    """Per citation label: the Source read for it; and per label, why none could be."""
    searching = StageCheckpoint.objects.filter(run=run, stage=RunState.SEARCHING, round=0).first()
    cursor = searching.cursor if searching else {}
    unreadable = dict(cursor.get("unreadable", {}))
    errors: dict[str, str] = {}
    for cp in StageCheckpoint.objects.filter(run=run, stage=RunState.INGESTING):
        errors.update(cp.cursor.get("errors", {}))
    hits = {hit.canonical_id: hit for hit in SearchHit.objects.filter(run=run, adapter=ADAPTER)}
    found: dict[str, int] = {}
    for label, key in cursor.get("labels", {}).items():
        hit = hits.get(key)
        url = str(hit.record.get("url", "")) if hit else key
        if hit is not None and hit.source_id is not None:
            found[label] = hit.source_id
        elif url in errors:
            unreadable[label] = f"{url} could not be fetched: {errors[url]}"
        else:
            unreadable[label] = f"{url} was not fetched (the run's documents budget)"
    return found, unreadable


def mine(ctx: StageContext) -> None:
    """Claims from the report's sentences (a finished stage is not mined again)."""
    if ctx.cursor.get("saved"):
        return
    report = report_of(ctx.run)
    sources, unreadable = cited_sources(ctx.run)
    subquestion = Subquestion.objects.filter(plan_version_id=ctx.run.plan_version_id).first()
    sentences = [s for s in report.sentences if report.blocks[s.block].kind != "heading"]
    roles = classify_sentences([s.text for s in sentences])
    skipped = 0
    ctx.progress(0, len(sentences))
    with transaction.atomic():
        for n, (sentence, role) in enumerate(zip(sentences, roles, strict=True)):
            cites = bool(sentence.citations or sentence.unresolved)
            if not cites and not role.is_finding:
                skipped += 1
                continue
            for text in split_coordination(sentence.text) or [sentence.text]:
                _save_claim(ctx.run, subquestion, text, sentence, sources, unreadable)
            ctx.progress(n + 1, len(sentences))
    ctx.save_cursor(saved=True, done=len(sentences), total=len(sentences))
    ctx.count(
        sentences=len(sentences),
        claims=Claim.objects.filter(run=ctx.run).count(),
        not_claims=skipped,
        uncited=CitedClaim.objects.filter(claim__run=ctx.run, citations=[], unresolved=[]).count(),
    )


def _save_claim(
    run: Run,
    subquestion: Subquestion | None,
    text: str,
    sentence: Any,
    sources: dict[str, int],
    unreadable: dict[str, str],
) -> None:
    found = describe(text)
    claim, created = Claim.objects.get_or_create(
        run=run,
        fingerprint=claim_fingerprint(text),
        defaults={
            "subquestion": subquestion,
            "text": text,
            "claim_type": found["claim_type"],
            "entities": found["entities"],
            "numbers": found["numbers"],
            "hedges": found["hedges"],
            "time_sensitive": found["time_sensitivity"] in TIME_SENSITIVE,
        },
    )
    cited, _ = CitedClaim.objects.get_or_create(claim=claim)
    if sentence.index not in cited.sentences:
        cited.wording = " ".join(filter(None, [cited.wording, sentence.raw.strip()]))
    cited.sentences = sorted({*cited.sentences, sentence.index})
    known = {c.get("label") for c in cited.citations}
    cited.citations += [
        c.to_json() | {"read": c.label in sources}
        for c in sentence.citations
        if c.label not in known
    ]
    cited.unresolved = sorted({*cited.unresolved, *sentence.unresolved})
    why = [
        unreadable.get(c.label, f"reference {c.label} could not be read")
        for c in sentence.citations
        if c.label not in sources
    ]
    why += [f"the marker {m} names no reference of the report" for m in sentence.unresolved]
    cited.unreadable = sorted({*cited.unreadable, *why})
    cited.save()
    cited.sources.add(*[sources[c.label] for c in sentence.citations if c.label in sources])
    if created:
        labels = ", ".join(c.label for c in sentence.citations) or "nothing"
        do_dispose(
            claim,
            DispositionState.PENDING,
            f"from sentence {sentence.index + 1} of the imported report, which cites {labels}",
            "mining",
        )


# --- 3. verifying: the citation check, then the ordinary verdict --------------------------


def cited_items(source_ids: Sequence[int], text: str, vector: Any) -> list[EvidenceItem]:
    """The passages of the cited sources closest to the claim (dense; else shared words)."""
    chunks = Passage.objects.filter(source_id__in=source_ids, kind="chunk").select_related(
        "source", "snapshot", "parent__source", "parent__snapshot"
    )
    if vector is not None:
        ranked = list(
            chunks.exclude(embedding__isnull=True).order_by(
                CosineDistance("embedding", vector), "pk"
            )[:CITED_PASSAGES]
        )
    else:
        wanted = content_stems(text)
        ranked = sorted(chunks, key=lambda p: (-len(wanted & content_stems(p.text)), p.pk))[
            :CITED_PASSAGES
        ]
    items: dict[int, EvidenceItem] = {}
    for passage in ranked:
        whole = in_context(passage)
        items.setdefault(whole.pk, evidence_item(whole, "support"))
    return list(items.values())


def verify_one(
    ctx: StageContext,
    claim: Claim,
    config: VerifyConfig,
    encode: Any,
    sentences: Encode | None = None,
) -> None:
    """The citation check, the ordinary verdict and, when neither supports the claim, one
    remediation search of the web adapters; all recorded in one transaction. ``encode``:
    the retrieval encoder (cited passages); ``sentences``: the verification encoder (the
    closest sentence of an unsettled check)."""
    cited = CitedClaim.objects.filter(claim=claim).first()
    read = dict(cited.sources.values_list("pk", "canonical_id")) if cited else {}
    source_ids = list(read)
    vector = encode([claim.text])[0] if encode is not None else None
    items = cited_items(source_ids, claim.text, vector) if source_ids else []
    pools = gathered_pools(claim)
    # The cited sources' passages the support and counter-evidence searches found too: the
    # citation check reads every passage of the cited source the run holds for the claim.
    keys = set(read.values())
    known = {i.evidence_id for i in items}
    for item in pools.items():
        if item.source_key in keys and item.evidence_id not in known:
            items.append(replace(item, pool=PoolName.SUPPORT))
            known.add(item.evidence_id)
    inp = claim_input(claim)
    cites = len(cited.citations) + len(cited.unresolved) if cited else 0
    check = check_citation(
        inp,
        items,
        config,
        cites=cites,
        unreadable=cited.unreadable if cited else (),
        encode=sentences,
    )
    combined = _with_cited(pools, items)
    verdict = verify_claim(inp, combined, config)
    remediation: dict[str, Any] = {}
    if check.outcome != SUPPORTS and verdict.status != Status.PASS and cited is not None:
        found, remediation = remediate(ctx, claim, set(source_ids), vector)
        if found:
            combined = _with_cited(combined, found, after=True)
            verdict = verify_claim(inp, combined, config)
            remediation["verdict"] = str(verdict.status)
    with transaction.atomic():
        tally = do_record_verdict(claim, verdict, combined.items())
        do_count_verification(claim.run, tally)
        if cited is not None:
            cited.outcome = check.outcome
            cited.reason = check.reason
            cited.quote = check.quote
            cited.confidence = check.confidence
            cited.passage_id = int(check.evidence_id) if check.evidence_id else None
            cited.remediation = remediation
            cited.save()


def _with_cited(pools: Pools, items: Sequence[EvidenceItem], *, after: bool = False) -> Pools:
    """``pools`` with ``items`` in support (first, or last when ``after``), each passage once."""
    known = {i.evidence_id for i in items}
    rest = tuple(i for i in pools.support if i.evidence_id not in known)
    return Pools(
        support=rest + tuple(items) if after else tuple(items) + rest,
        refute=tuple(i for i in pools.refute if i.evidence_id not in known),
        background=pools.background,
    )


def remediate(
    ctx: StageContext, claim: Claim, cited: set[int], vector: Any
) -> tuple[list[EvidenceItem], dict[str, Any]]:
    """One bounded search for better support on the web adapters (the libraries were
    searched already, by the counter-evidence stage's support queries): the claim's text,
    ``REMEDIATION_HITS`` results per adapter, each page fetched through the guarded
    fetcher and ingested into the plan's captures; the new sources' passages closest to
    the claim. Returns them and what was done, in words."""
    web = list(adapters.search_adapters(None).adapters)
    if not web:
        return [], {"searched": [], "note": "the libraries only: no web search adapter is set"}
    query = f"support: {claim.text}"[:500]
    found: list[int] = []
    with FetchPool(FetchOptions.from_settings()) as pool:
        for adapter in web:
            hits = adapter.search(claim.text, "source-specific", REMEDIATION_HITS)
            do_record_search_hits(
                ctx.run, query_key="", query_text=query, adapter=adapter.name, hits=hits
            )
            rows = SearchHit.objects.filter(run=ctx.run, query_text=query, adapter=adapter.name)
            for hit in rows.order_by("rank"):
                if hit.source_id is None:
                    url = str(hit.record.get("url") or hit.canonical_id)
                    ingest_page(ctx, hit, pool.submit(url))
                    hit.refresh_from_db(fields=["source"])
                if hit.source_id is not None and hit.source_id not in cited:
                    found.append(hit.source_id)
    items = cited_items(found, claim.text, vector) if found else []
    words = {
        "searched": [a.name for a in web],
        "query": claim.text,
        "sources": len(set(found)),
        "note": f"{len(set(found))} new source(s) read from the web adapters",
    }
    return items, words


def verify(ctx: StageContext, config: VerifyConfig, sentences: Encode | None = None) -> None:
    """Every pending claim of the audit, oldest first (a resumed stage skips judged ones).

    The cited sources' passages are found with the retrieval encoder (the one their
    stored embeddings come from); without it, by the words they share with the claim.
    ``sentences`` encodes sentences for the verifiers (the stage's cached encoder: the
    sentences the families read are encoded once).
    """
    from research.stages.mine import encoder

    encode, why = encoder()
    if why:
        ctx.note("cited passages", why)
    run_claims = Claim.objects.filter(run=ctx.run)
    total = run_claims.count()
    for claim in run_claims.filter(status=Verdict.PENDING).order_by("pk"):
        ctx.progress(total - run_claims.filter(status=Verdict.PENDING).count(), total)
        ctx.safe_point(wall_time=False)
        verify_one(ctx, claim, config, encode, sentences)
    ctx.progress(total, total)
    outcomes = CitedClaim.objects.filter(claim__run=ctx.run)
    ctx.count(
        **{
            f"citation_{o}": outcomes.filter(outcome=o).count()
            for o in CitationOutcome.values
            if o != CitationOutcome.PENDING
        }
    )
