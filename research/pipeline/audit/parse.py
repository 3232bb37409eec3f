"""Parse a report written by another research engine into sentences and the sources they cite.

One public function, :func:`parse_report`. It decodes the input, picks the format (given,
or sniffed: a JSON object, then HTML, then Markdown, else plain text), reads the format's
layout (:mod:`~research.pipeline.audit.layout`, :mod:`~research.pipeline.audit.htmldoc`),
parses the reference lines (:mod:`~research.pipeline.audit.references`) and reads every
body block's sentences and markers against them (:mod:`~research.pipeline.audit.inline`).

JSON is the shape of Perplexity's API: ``{"text": …, "citations": [url, …]}`` (or the
answer in ``choices[0].message.content``), where ``[1]`` in the text is ``citations[0]``;
a citation may also be an object ``{"url": …, "title": …}``, and ``search_results`` (a
list of such objects) stands in for ``citations`` or gives their titles. The text is read
as Markdown.

A broken citation never raises: it is a :class:`ParseFinding` (a dangling marker, a
reference with no link, a duplicated or unused reference, a malformed URL) or simply an
uncited sentence. :class:`ReportParseError` is raised only for input that is no report at
all: empty, binary, undecodable, over :data:`MAX_REPORT_CHARS`, or JSON of another shape.
"""

from __future__ import annotations

import json
import re
from typing import Any

from research.pipeline.audit.htmldoc import read_html
from research.pipeline.audit.inline import Sentence, plain_text, read_block
from research.pipeline.audit.layout import Layout, read_text
from research.pipeline.audit.markdowndoc import read_markdown
from research.pipeline.audit.records import (
    MAX_REPORT_CHARS,
    Citation,
    ParsedReport,
    ParseFinding,
    ReportBlock,
    ReportParseError,
    ReportSentence,
)
from research.pipeline.audit.references import (
    Resolver,
    normalize_label,
    parse_entry,
    read_target,
    text_identifiers,
    without_link,
)
from research.pipeline.language.citations import HTML_START, MARKDOWN_CUE

FORMATS = ("auto", "markdown", "html", "text", "json")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_HTML_ANYWHERE = re.compile(r"<(?:!doctype\s+html|html|body)\b", re.IGNORECASE)
_SHAPE = (
    'a JSON report must be an object with the report in "text" and its sources in '
    '"citations" (a list of URLs or of {"url", "title"} objects)'
)

Reference = tuple[Citation, list[ParseFinding]]


def parse_report(data: str | bytes, format: str = "auto", filename: str = "") -> ParsedReport:
    """The sentences, citations, references and citation problems of one report."""
    text = _decode(data)
    kind = _sniff(text, format, filename)
    leading: list[Reference] = []
    if kind == "json":
        body, leading = _read_json(text)
        layout = read_markdown(body)
    elif kind == "html":
        found = read_html(text)
        kind, layout = ("html", found) if found is not None else ("text", read_text(text))
    elif kind == "markdown":
        layout = read_markdown(text)
    else:
        layout = read_text(text)
    return _assemble(kind, layout, leading)


# --- input -----------------------------------------------------------------------------------


def _decode(data: str | bytes) -> str:
    if isinstance(data, bytes):
        data = _decode_bytes(data)
    elif not isinstance(data, str):
        raise ReportParseError("a report must be text or bytes; paste the report's text instead")
    if "\x00" in data:
        raise ReportParseError(_binary())
    try:
        data.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ReportParseError(
            f"the text holds a character that is not text (at {exc.start}); "
            "copy the report again from its source"
        ) from exc
    if len(data) > MAX_REPORT_CHARS:
        raise ReportParseError(_too_long(len(data)))
    text = _CONTROL.sub("", data.replace("\r\n", "\n").replace("\r", "\n"))
    if not text.strip():
        raise ReportParseError("the report is empty; paste or upload the report's text")
    return text


def _decode_bytes(data: bytes) -> str:
    if len(data) > 4 * MAX_REPORT_CHARS:
        raise ReportParseError(_too_long(len(data)))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ReportParseError(_binary()) from exc
    if b"\x00" in data:
        raise ReportParseError(_binary())
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportParseError(
            f"the file is not UTF-8 text (byte {exc.start} cannot be read); "
            "save the report as UTF-8 text, Markdown, HTML or JSON and upload it again"
        ) from exc


def _binary() -> str:
    return (
        "the file is binary (it holds NUL bytes), not a report; "
        "upload the report as Markdown, HTML, plain text or JSON"
    )


def _too_long(size: int) -> str:
    return (
        f"the report has {size:,} characters, over the {MAX_REPORT_CHARS:,} one report may "
        "have; split it and audit the parts"
    )


def _sniff(text: str, format: str, filename: str) -> str:
    """The format given, else the file name's, else the text's own."""
    if format not in FORMATS:
        raise ReportParseError(f"unknown report format {format!r}; use one of {', '.join(FORMATS)}")
    if format != "auto":
        return format
    name = filename.lower()
    for suffixes, kind in (
        ((".json",), "json"),
        ((".html", ".htm", ".xhtml"), "html"),
        ((".md", ".markdown"), "markdown"),
        ((".txt",), "text"),
    ):
        if name.endswith(suffixes):
            return kind
    if text.lstrip().startswith("{"):
        return "json"
    if HTML_START.match(text) or _HTML_ANYWHERE.search(text, 0, 4096):
        return "html"
    return "markdown" if MARKDOWN_CUE.search(text) else "text"


# --- JSON ------------------------------------------------------------------------------------


def _read_json(text: str) -> tuple[str, list[Reference]]:
    """The report's Markdown and its numbered citations from a Perplexity-shaped object."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        message = f"the report looks like JSON but does not parse ({exc}); {_SHAPE}"
        raise ReportParseError(message) from exc
    if not isinstance(data, dict):
        raise ReportParseError(_SHAPE)
    body = _json_body(data)
    citations, results = data.get("citations"), data.get("search_results")
    if not isinstance(citations, list | None) or not isinstance(results, list | None):
        raise ReportParseError(_SHAPE)
    titles = {
        url: title
        for item in results or ()
        if isinstance(item, dict)
        and (url := _string(item, "url"))
        and (title := _string(item, "title"))
    }
    items = citations if citations is not None else results or []
    return body, [_json_citation(item, str(number), titles) for number, item in enumerate(items, 1)]


def _json_body(data: dict[str, Any]) -> str:
    body = data.get("text")
    if body is None:
        choices = data.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        body = message.get("content") if isinstance(message, dict) else None
    if not isinstance(body, str) or not body.strip():
        raise ReportParseError(_SHAPE)
    return body


def _json_citation(item: Any, label: str, titles: dict[str, str]) -> Reference:
    if isinstance(item, str):
        url, title = item, ""
    elif isinstance(item, dict):
        url, title = _string(item, "url"), _string(item, "title")
    else:
        raise ReportParseError(f"citation {label} is neither a URL nor an object; {_SHAPE}")
    url, title = url.strip(), " ".join((title or titles.get(url, "")).split())
    link = read_target(url)
    if link is not None:
        return Citation(label, link.url, link.doi, link.arxiv_id, title), []
    doi, arxiv_id = text_identifiers(url)
    findings = []
    if url and not (doi or arxiv_id):
        detail = f"citation {label}: {url!r} is not a web address"
        findings.append(ParseFinding("malformed-url", detail, label))
    if not (doi or arxiv_id):
        findings.append(without_link(f"citation {label}", label))
    return Citation(label, "", doi, arxiv_id, title), findings


def _string(item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    return value if isinstance(value, str) else ""


# --- assembly --------------------------------------------------------------------------------


def _assemble(kind: str, layout: Layout, leading: list[Reference]) -> ParsedReport:
    """Number the blocks and sentences, resolve the markers, gather the findings."""
    entries = sorted(layout.entries, key=lambda entry: entry.order)
    parsed = leading + [parse_entry(entry.text, entry.number) for entry in entries]
    references = [citation for citation, _ in parsed]
    findings = [finding for _, found in parsed for finding in found]
    resolver = Resolver(references)
    findings.extend(resolver.findings)
    blocks: list[ReportBlock] = []
    sentences: list[ReportSentence] = []
    for raw in layout.blocks:
        if raw.kind == "heading":
            blocks.append(ReportBlock("heading", raw.text, raw.level))
            continue
        numbers = []
        for sentence in read_block(raw.text, resolver):
            numbers.append(len(sentences))
            sentences.append(_sentence(sentence, len(sentences), len(blocks)))
            findings.extend(_marker_findings(sentence, len(sentences) - 1, bool(references)))
        blocks.append(ReportBlock(raw.kind, raw.text, 0, tuple(numbers)))
    findings.extend(_unused(resolver, sentences))
    title = layout.title or next((plain_text(b.text) for b in blocks if b.kind == "heading"), "")
    return ParsedReport(
        kind, title, tuple(blocks), tuple(sentences), tuple(references), tuple(findings)
    )


def _sentence(sentence: Sentence, index: int, block: int) -> ReportSentence:
    citations = [citation for marker in sentence.markers for citation in marker.citations]
    return ReportSentence(
        index=index,
        block=block,
        raw=sentence.raw,
        text=sentence.text,
        citations=tuple(dict.fromkeys(citations)),
        markers=tuple(marker.raw for marker in sentence.markers),
        unresolved=tuple(marker.raw for marker in sentence.markers if not marker.resolved),
    )


def _marker_findings(sentence: Sentence, index: int, listed: bool) -> list[ParseFinding]:
    where = "which is not in the reference list" if listed else "but the report lists no references"
    findings = []
    for marker in sentence.markers:
        if marker.malformed:
            findings.append(ParseFinding("malformed-url", marker.malformed, marker.raw, index))
        findings.extend(
            ParseFinding("dangling-marker", f"{marker.raw} names {label}, {where}", label, index)
            for label in marker.dangling
        )
    return findings


def _unused(resolver: Resolver, sentences: list[ReportSentence]) -> list[ParseFinding]:
    cited = {normalize_label(c.label) for sentence in sentences for c in sentence.citations}
    return [
        ParseFinding("unused-reference", f"no sentence cites reference {ref.label}", ref.label)
        for key, ref in resolver.by_label.items()
        if key not in cited
    ]
