"""Extraction: captured bytes -> plain text with structure blocks, pages and metadata.

One public function, :func:`extract`. It sniffs the kind (HTML, PDF, Markdown, plain
text), decodes or parses it, and returns an :class:`Extracted` record whose ``text`` is
what a snapshot stores; every :class:`Block` and :class:`PageSpan` carries exact offsets
into that text, so the chunker can keep headings, lists, tables and page numbers.

Evidence text is quoted verbatim later, so nothing here guesses: text without a declared
encoding must be UTF-8 (or carry a BOM), and every refusal is an :class:`ExtractionError`
with a reason code and a sentence a user can act on.

Bounds: ``extract(..., max_chars=N)`` stops keeping text once the document has passed
``N`` characters (it only counts the rest, so the refusal still says how long the text is)
and raises :class:`TooLong`. :func:`extract_isolated` runs the same extraction in a child
process and kills it at a deadline: the parsers (lxml under trafilatura, pypdf) cannot be
interrupted from inside, and the memory a hostile file made them take goes with the child.
"""

from __future__ import annotations

import functools
import io
import logging
import multiprocessing
import re
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Literal

_log = logging.getLogger(__name__)

BlockKind = Literal["title", "heading", "paragraph", "list_item", "table", "caption", "code"]
DocKind = Literal["html", "pdf", "markdown", "rst", "text"]

# C0 controls but tab, newline, form feed and carriage return; DEL; the C1 block.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_WORDS = re.compile(r"[^\W\d_]{2}")  # at least one two-letter word
_BLANK_LINES = re.compile(r"\n[ \t]*\n")
# A site generator's front matter: "---" on the first line, a "key:" line, and a closing
# line of "---" (YAML, as Jekyll and Hugo write it).
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n[A-Za-z_][\w-]*:[^\n]*\n(?:[^\n]*\n)*?---[ \t]*(?:\n|\Z)")
# A raw HTML line break inside Markdown's inline text ("M-16-21<br/>MEMORANDUM").
_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
# Its ``title:`` line, a plain or quoted YAML scalar on one line (a block scalar, "title: >",
# is not read: the first heading stays the title).
_FRONT_MATTER_TITLE = re.compile(r"^title:[ \t]*(?P<value>[^\s>|#].*?)[ \t]*$", re.MULTILINE)
# A Markdown table's rule row ("|---|:--:|") and the pipes between its cells (not "\|").
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?[ \t]*$")
_TABLE_PIPE = re.compile(r"(?<!\\)\|")
# A PEP's RFC 2822 header, read by docutils' PEP reader.
_PEP_HEADER = re.compile(r"\APEP:[ \t]*\d+[ \t]*\n")
# A role docutils left unresolved, as its raw text: ":name:`content`" (":c:func:`…`" too).
_RST_ROLE = re.compile(r":(?:[A-Za-z][\w+.-]*:)+`(?P<content>[^`\n]+)`")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+\S")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_CT_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", re.I)


class ExtractionError(Exception):
    """A file that cannot become evidence text; ``reason`` is a stable code."""

    permanent = True

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __str__(self) -> str:
        return str(self.args[0])


class TooLong(ExtractionError):
    """The text has more than ``limit`` characters; ``chars`` is its full length."""

    def __init__(self, chars: int, limit: int) -> None:
        super().__init__(
            "too_long",
            f"the document's text has {chars:,} characters, over the {limit:,} one document "
            "may have; split it into smaller files",
        )
        self.chars, self.limit = chars, limit


@dataclass(frozen=True)
class Block:
    """A structural unit of the text: ``text[start:end]`` is its content."""

    kind: BlockKind
    start: int
    end: int
    level: int = 0  # heading depth (1 = top); 0 for non-headings
    page: int | None = None


@dataclass(frozen=True)
class PageSpan:
    """PDF page ``page`` (1-based) occupies ``text[start:end]``."""

    page: int
    start: int
    end: int


@dataclass(frozen=True)
class Extracted:
    text: str
    title: str
    kind: DocKind
    content_type: str
    extractor: str
    extractor_version: str
    blocks: tuple[Block, ...] = ()
    pages: tuple[PageSpan, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


class _Builder:
    """Appends pieces of text and records block offsets as it goes.

    Past ``max_chars`` it keeps nothing more and only counts (``_finish`` refuses it).
    """

    def __init__(self, max_chars: int | None = None) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.blocks: list[Block] = []
        self.max_chars = max_chars

    def add(self, text: str, kind: BlockKind, level: int = 0, page: int | None = None) -> None:
        text = _CONTROL.sub("", text).strip()  # every extractor's text, HTML's too
        if not text:
            return
        gap = 2 if self.size else 0
        if self.max_chars is not None and self.size + gap + len(text) > self.max_chars:
            self.size += gap + len(text)
            self.parts, self.blocks = [], []  # refused at the end: let the kept text go
            return
        if gap:
            self.parts.append("\n\n")
            self.size += 2
        self.blocks.append(Block(kind, self.size, self.size + len(text), level, page))
        self.parts.append(text)
        self.size += len(text)

    @property
    def over(self) -> bool:
        return self.max_chars is not None and self.size > self.max_chars

    @property
    def text(self) -> str:
        return "".join(self.parts)


# --- sniffing and decoding ---------------------------------------------------------


def sniff_kind(data: bytes, filename: str = "", content_type: str = "") -> DocKind:
    """Decide the document kind from magic bytes first, then content type, then name."""
    head = data[:1024].lstrip()
    lowered = head.lower()
    name = filename.lower()
    ctype = content_type.split(";")[0].strip().lower()
    if head.startswith(b"%PDF-") or ctype == "application/pdf":
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        raise ExtractionError(
            "unsupported", "ZIP-based documents (DOCX, ODT, EPUB) are not supported yet"
        )
    if ctype in {"text/html", "application/xhtml+xml"} or name.endswith((".html", ".htm")):
        return "html"
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<body" in lowered:
        return "html"
    if ctype == "text/markdown" or name.endswith((".md", ".markdown")):
        return "markdown"
    if ctype == "text/x-rst" or name.endswith(".rst"):
        return "rst"
    return "text"


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 with a BOM: NUL bytes are expected
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 9 or 13 < b < 32 or b == 127)
    return controls > len(sample) * 0.05


def _declared_charset(data: bytes, content_type: str, kind: DocKind) -> str:
    match = _CT_CHARSET.search(content_type)
    if match:
        return match.group(1)
    if kind == "html":
        meta = _META_CHARSET.search(data[:4096])
        if meta:
            return meta.group(1).decode("ascii", "replace")
    return ""


def decode_text(data: bytes, content_type: str = "", kind: DocKind = "text") -> str:
    """Decode bytes as declared (BOM, HTTP charset, HTML meta) or as strict UTF-8.

    Undeclared bytes that are not UTF-8 are refused, naming the likely encoding,
    because a wrong guess would silently corrupt every later quote.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _strict(data, "utf-16")
    declared = _declared_charset(data, content_type, kind)
    if declared:
        try:
            return _strict(data, declared)
        except LookupError:
            pass  # an unknown label: fall back to UTF-8 below
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        guess = _guess_encoding(data)
        hint = f" (it looks like {guess})" if guess else ""
        raise ExtractionError(
            "encoding",
            f"text is not valid UTF-8 at byte {exc.start}{hint} and declares no encoding; "
            "re-save it as UTF-8 or upload it with a charset",
        ) from exc


def _strict(data: bytes, encoding: str) -> str:
    """Decode with a declared text encoding; LookupError for a label that names none."""
    import codecs

    if not getattr(codecs.lookup(encoding), "_is_text_encoding", True):
        raise LookupError(f"{encoding!r} is not a text encoding")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ExtractionError(
            "encoding", f"text does not decode as its declared {encoding} at byte {exc.start}"
        ) from exc
    except (UnicodeError, ValueError) as exc:  # e.g. charset=undefined always refuses
        raise ExtractionError(
            "encoding", f"the declared charset {encoding!r} cannot decode text ({exc})"
        ) from exc


def _guess_encoding(data: bytes) -> str:
    from charset_normalizer import from_bytes

    best = from_bytes(data[:65536]).best()
    return str(best.encoding) if best is not None else ""


# --- per kind ------------------------------------------------------------------------


def _text_blocks(text: str, builder: _Builder, page: int | None = None) -> None:
    """Paragraphs split on blank lines; runs of list-item lines become list items."""
    for chunk in _BLANK_LINES.split(text):
        lines = [line for line in chunk.split("\n") if line.strip()]
        if lines and all(_LIST_ITEM.match(line) for line in lines):
            for line in lines:
                builder.add(line, "list_item", page=page)
        else:
            builder.add("\n".join(line.rstrip() for line in lines), "paragraph", page=page)


def _extract_text(data: bytes, content_type: str, max_chars: int | None) -> Extracted:
    text = _clean(decode_text(data, content_type, "text"))
    builder = _Builder(max_chars)
    _text_blocks(text, builder)
    return _finish(builder, "", "text", "text/plain", "text", _python_version())


def _front_matter_title(block: str) -> str:
    """The ``title:`` of a front-matter block as YAML reads a one-line scalar: its quotes
    removed, or a plain value up to a " #" comment ("" when it has none)."""
    found = _FRONT_MATTER_TITLE.search(block)
    if found is None:
        return ""
    value = found.group("value")
    mark = value[0]
    if mark in "\"'" and len(value) >= 2 and value[-1] == mark:
        inner = value[1:-1]
        value = inner.replace("''", "'") if mark == "'" else inner.replace('\\"', '"')
    else:
        value = value.split(" #", 1)[0]
    return " ".join(value.split())


def _extract_markdown(data: bytes, content_type: str, max_chars: int | None) -> Extracted:
    """Markdown, parsed as CommonMark (with tables) by markdown-it-py, becomes plain text
    blocks: headings, paragraphs, list items, tables and code. The markup's marks are left
    out: emphasis and code marks, a link's target, raw HTML tags (an HTML list's items
    become list items) and a leading front-matter block (``---`` … ``---``), which is a
    site generator's settings, not the document's text. The title is the front matter's
    ``title:`` when it has one (the page's own name: its first heading is often a section,
    "Introduction"), else the first heading."""
    from markdown_it import MarkdownIt

    text = _clean(decode_text(data, content_type, "markdown"))
    front = _FRONT_MATTER.match(text)
    title = _front_matter_title(front.group(0)) if front else ""
    text = text[front.end() :] if front else text
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    lines = text.split("\n")
    builder = _Builder(max_chars)
    in_item = 0  # list items open around the current token
    for i, token in enumerate(tokens):
        kind = token.type
        if kind == "list_item_open":
            in_item += 1
        elif kind == "list_item_close":
            in_item -= 1
        elif kind == "heading_open":
            words = _md_inline(tokens[i + 1])
            title = title or words
            builder.add(words, "heading", int(token.tag[1:]))
        elif kind == "paragraph_open" and tokens[i + 1].type == "inline":
            builder.add(_md_inline(tokens[i + 1]), "list_item" if in_item else "paragraph")
        elif kind in ("fence", "code_block"):
            builder.add(token.content, "code")
        elif kind == "html_block":
            _html_fragment(token.content, builder)
        elif kind == "table_open" and token.map:
            # From the source rows: a row with more cells than the header keeps them all
            # (the table syntax drops the excess; evidence text must not be dropped).
            rows = [_md_row(md, line) for line in lines[token.map[0] : token.map[1]]]
            builder.add("\n".join(" | ".join(r) for r in rows if any(r)), "table")
    version = _dist_version("markdown-it-py")
    return _finish(builder, title, "markdown", "text/markdown", "markdown-it-py", version)


def _md_row(md: Any, line: str) -> list[str]:
    """One source row of a Markdown table as its cells' words ([] for the rule row)."""
    if _TABLE_RULE.match(line):
        return []
    cells = _TABLE_PIPE.split(line.strip().removeprefix("|").removesuffix("|"))
    return [_md_inline(md.parseInline(cell.strip())[0]) if cell.strip() else "" for cell in cells]


def _md_inline(token: Any) -> str:
    """An inline token's words: text and code spans as written, breaks (an HTML ``<br>``
    too) as newlines; marks, link targets, images and raw HTML tags left out."""
    parts = []
    for child in token.children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak") or (
            child.type == "html_inline" and _HTML_BREAK.match(child.content)
        ):
            parts.append("\n")
    return "".join(parts)


def _html_fragment(html: str, builder: _Builder) -> None:
    """A raw HTML block inside Markdown: its list items as list items, the rest as one
    paragraph of its text; comments and scripts say nothing."""
    from lxml import html as lxml_html

    try:
        fragments = lxml_html.fragments_fromstring(html)
    except Exception:  # lxml refuses some hostile or empty fragments: keep nothing of it
        return
    for fragment in fragments:
        if isinstance(fragment, str):
            builder.add(fragment, "paragraph")
            continue
        if not isinstance(fragment.tag, str) or fragment.tag in ("script", "style"):
            continue
        items = fragment.findall(".//li")
        if fragment.tag == "li":
            items = [fragment]
        if items:
            for item in items:
                builder.add(" ".join(item.text_content().split()), "list_item")
        else:
            builder.add(" ".join(fragment.text_content().split()), "paragraph")


def _extract_rst(data: bytes, content_type: str, max_chars: int | None) -> Extracted:
    """reStructuredText, parsed by docutils: section titles become headings, and
    paragraphs, list items, literal blocks (code) and tables become blocks, with the
    markup's marks left out (a role or a link keeps its words). A PEP (a file opening with
    "PEP: <number>") is read by docutils' own PEP reader: its header is metadata, not text,
    and its "Title" is the document's title. A contents topic is navigation; a directive
    docutils does not know (Sphinx's ``versionadded``, ``c:function``) is left out with
    its content. No other file is read (``include``, ``raw`` are off). A file docutils
    cannot parse is taken as plain text, and the log says why."""
    from docutils import nodes
    from docutils.core import publish_doctree

    text = _clean(decode_text(data, content_type, "text"))
    settings = {
        "report_level": 5,  # nothing printed; problems stay in the tree, which we skip
        "halt_level": 5,
        "file_insertion_enabled": False,  # never read another file: "include", "raw"
        "raw_enabled": False,
        "_disable_config": True,
        "warning_stream": io.StringIO(),
        "syntax_highlight": "none",
    }
    readers = ["pep", "standalone"] if _PEP_HEADER.match(text) else ["standalone"]
    tree = None
    for reader in readers:  # a PEP whose header its reader refuses is read as plain RST
        try:
            tree = publish_doctree(text, reader=reader, settings_overrides=settings)
            break
        except Exception as exc:  # docutils on hostile or broken markup: say so, go on
            _log.warning("docutils (%s reader) could not parse a file: %s", reader, exc)
    if tree is None:
        return _extract_text(data, content_type, max_chars)
    builder = _Builder(max_chars)
    _rst_blocks(tree, builder, 0, nodes)
    title = ""
    if reader == "pep":
        fields = tree.next_node(nodes.field_list)
        for field in fields.children if fields is not None else ():
            if field.children and field.children[0].astext().strip().lower() == "title":
                title = field.children[1].astext().strip()
    if not title:
        first = tree.next_node(nodes.title)
        title = _rst_text(first) if first is not None else ""
    version = _dist_version("docutils")
    return _finish(builder, title, "rst", "text/x-rst", "docutils", version)


def _rst_blocks(node: Any, builder: _Builder, depth: int, nodes: Any) -> None:
    """The blocks of one docutils node's children, in document order."""
    for child in node.children:
        if isinstance(child, nodes.Text):
            continue
        if isinstance(
            child,
            (
                nodes.system_message,
                nodes.comment,
                nodes.substitution_definition,
                nodes.target,
                nodes.docinfo,
                nodes.raw,
                nodes.problematic,
            ),
        ):
            continue
        if isinstance(child, nodes.field_list) and child is node.children[0] and depth == 0:
            continue  # a header of fields before the text (a PEP's): metadata
        if isinstance(child, nodes.topic) and "contents" in child.get("classes", []):
            continue
        if isinstance(child, nodes.section):
            _rst_blocks(child, builder, depth + 1, nodes)
        elif isinstance(child, nodes.title):
            builder.add(_rst_text(child), "heading", max(depth, 1))
        elif isinstance(child, nodes.paragraph):
            in_item = isinstance(child.parent, nodes.list_item)
            builder.add(_rst_text(child), "list_item" if in_item else "paragraph")
        elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
            builder.add(child.astext(), "code")
        elif isinstance(child, nodes.table):
            rows = [
                " | ".join(" ".join(entry.astext().split()) for entry in row.children)
                for row in child.findall(nodes.row)
            ]
            builder.add("\n".join(rows), "table")
        elif isinstance(child, nodes.Element):
            _rst_blocks(child, builder, depth, nodes)


def _rst_text(node: Any) -> str:
    """A text node's words; a role docutils does not know (Sphinx's ``:envvar:`X```,
    ``:c:func:`title <target>```) keeps only its text, as Sphinx shows it."""
    return _RST_ROLE.sub(_role_words, node.astext())


def _role_words(match: re.Match[str]) -> str:
    words = match["content"]
    if words.endswith(">") and "<" in words:  # "title <target>": the title
        words = words[: words.rindex("<")].strip() or words
    if words.startswith("~"):  # "~package.module.name": its last part
        words = words[1:].rsplit(".", 1)[-1]
    return words.lstrip("!")


@functools.cache
def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def _pdf_string(value: Any) -> str:
    """A PDF metadata value as text: '' for a missing, null or dangling reference."""
    try:
        if hasattr(value, "get_object"):
            value = value.get_object()
    except Exception:  # a reference to an object the file does not have
        return ""
    return value.strip() if isinstance(value, str) else ""


def _extract_pdf(data: bytes, max_chars: int | None) -> Extracted:
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("pdf", "the PDF is encrypted")
        page_texts = [_clean(page.extract_text() or "") for page in reader.pages]
        info: Any = reader.metadata or {}
    except ExtractionError:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files
        raise ExtractionError("pdf", f"the PDF could not be read: {exc}") from exc
    builder = _Builder(max_chars)
    pages: list[PageSpan] = []
    for number, page_text in enumerate(page_texts, start=1):
        begin = len(builder.blocks)
        _text_blocks(page_text, builder, page=number)
        if len(builder.blocks) > begin:
            pages.append(PageSpan(number, builder.blocks[begin].start, builder.blocks[-1].end))
    title = _pdf_string(info.get("/Title"))
    result = _finish(builder, title, "pdf", "application/pdf", "pypdf", pypdf.__version__)
    meta = {"page_count": len(page_texts), "author": _pdf_string(info.get("/Author"))}
    return _replace(result, pages=tuple(pages), metadata={**result.metadata, **meta})


def _extract_html(data: bytes, content_type: str, url: str, max_chars: int | None) -> Extracted:
    import trafilatura

    html = decode_text(data, content_type, "html")
    try:
        doc: Any = trafilatura.bare_extraction(
            html,
            url=url or None,
            include_tables=True,
            include_comments=False,
            include_formatting=False,
            include_links=False,
            include_images=False,
            with_metadata=True,
            favor_recall=True,
        )
    except Exception as exc:  # lxml/trafilatura failure on hostile markup
        raise ExtractionError("malformed_html", f"the HTML could not be parsed: {exc}") from exc
    if doc is None or doc.body is None or not _WORDS.search(doc.text or ""):
        raise ExtractionError(
            "malformed_html", "the HTML is malformed: no readable main text survived parsing"
        )
    builder = _Builder(max_chars)
    for element in doc.body:
        _html_element(element, builder)
    metadata = {
        key: str(value)
        for key in ("author", "date", "sitename", "hostname", "description", "url")
        if (value := getattr(doc, key, None))
    }
    result = _finish(
        builder, doc.title or "", "html", "text/html", "trafilatura", trafilatura.__version__
    )
    return _replace(result, metadata=metadata)


def _html_element(element: Any, builder: _Builder) -> None:
    tag = element.tag
    text = " ".join("".join(element.itertext()).split())
    if tag == "head":
        rend = str(element.get("rend") or "h2")
        level = int(rend[1]) if rend[:1] == "h" and rend[1:2].isdigit() else 2
        builder.add(text, "heading", level)
    elif tag == "list":
        for item in element.iter("item"):
            builder.add(" ".join("".join(item.itertext()).split()), "list_item")
    elif tag == "table":
        _html_table(element, builder)
    elif tag in {"code", "pre"}:
        builder.add("".join(element.itertext()), "code")
    else:
        builder.add(text, "paragraph")


def _html_table(table: Any, builder: _Builder) -> None:
    """Rows become ``a | b`` lines; a leading one-cell row is the table's caption."""
    rows = [
        [" ".join("".join(cell.itertext()).split()) for cell in row.iter("cell")]
        for row in table.iter("row")
    ]
    rows = [row for row in rows if any(row)]
    if rows and sum(1 for cell in rows[0] if cell) == 1 and len(rows) > 1:
        builder.add(next(cell for cell in rows[0] if cell), "caption")
        rows = rows[1:]
    builder.add("\n".join(" | ".join(row) for row in rows), "table")


# --- shared ----------------------------------------------------------------------------


def _clean(text: str) -> str:
    """Normalize newlines and drop control characters (kept offsets refer to the result)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def _python_version() -> str:
    import sys

    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _finish(
    builder: _Builder, title: str, kind: DocKind, ctype: str, name: str, version: str
) -> Extracted:
    if builder.over:
        assert builder.max_chars is not None
        raise TooLong(builder.size, builder.max_chars)
    text = builder.text
    if not _WORDS.search(text):
        raise ExtractionError("no_text", "no readable text could be extracted from the file")
    title = " ".join(title.split())
    return Extracted(text, title, kind, ctype, name, version, tuple(builder.blocks))


def _replace(result: Extracted, **changes: Any) -> Extracted:
    from dataclasses import replace

    return replace(result, **changes)


def extract(
    data: bytes,
    *,
    filename: str = "",
    content_type: str = "",
    url: str = "",
    max_chars: int | None = None,
) -> Extracted:
    """Turn captured bytes into text, structure and metadata, or raise ExtractionError.

    A text over ``max_chars`` characters raises :class:`TooLong`, its length counted but
    not kept.
    """
    if not data.strip():
        raise ExtractionError("empty", "the file is empty")
    kind = sniff_kind(data, filename, content_type)
    if kind == "pdf":
        return _extract_pdf(data, max_chars)
    if _looks_binary(data):
        raise ExtractionError(
            "binary", "the file looks like binary data, not HTML, PDF, Markdown or text"
        )
    if kind == "html":
        return _extract_html(data, content_type, url, max_chars)
    if kind == "markdown":
        return _extract_markdown(data, content_type, max_chars)
    if kind == "rst":
        return _extract_rst(data, content_type, max_chars)
    return _extract_text(data, content_type, max_chars)


def corpus_document(title: str, body: str) -> Extracted:
    """A corpus record (BEIR / SciFact): text is ``title + "\\n\\n" + body``."""
    builder = _Builder()
    title = title.strip()
    body = body.strip()
    if title:
        builder.add(title, "title", 1)
    if body:
        builder.add(body, "paragraph")
    return _finish(builder, title, "text", "text/plain", "corpus-jsonl", "1")


# --- in a child process ------------------------------------------------------------------

# What the fork server imports once, so that each child starts with the extractors loaded.
# ``__main__`` too, as multiprocessing does by default: a child then finds the main module
# (``manage.py``, the ``pytest`` script) already there instead of running it again.
_PRELOAD = [
    "__main__",
    "research.pipeline.extract",
    "trafilatura",
    "pypdf",
    "charset_normalizer",
    "markdown_it",
    "docutils.core",
]


def extract_isolated(
    data: bytes,
    *,
    timeout_s: float,
    filename: str = "",
    content_type: str = "",
    url: str = "",
    max_chars: int | None = None,
) -> Extracted:
    """:func:`extract` in a child process, killed at ``timeout_s`` (then ``TimeoutError``).

    Children come from a ``forkserver`` that has the extractors imported (it starts on the
    first call, a second or two, which counts against the first deadline). The bytes reach
    the child through a temporary file: as an argument they would be pickled into a copy
    that the worker's heap might keep. The child never outlives the call, nor does the
    memory it took. A child that dies without an answer (killed for memory, a crash in a
    parser) is an ``ExtractionError("crashed")``; an unexpected exception in it, a
    ``RuntimeError``. A daemonic process may not have children: there, this extracts in
    the process. As with any start method but ``fork``, the main module must be safe to
    import (``if __name__ == "__main__":``).
    """
    options = {"filename": filename, "content_type": content_type, "url": url}
    if multiprocessing.current_process().daemon:
        return extract(data, max_chars=max_chars, **options)
    context = _context()
    with tempfile.NamedTemporaryFile(prefix="extract-", suffix=".raw") as raw:
        raw.write(data)
        raw.flush()
        receive, send = context.Pipe(duplex=False)
        child = context.Process(
            target=_extract_child, args=(send, raw.name, max_chars, options), name="extract"
        )
        child.daemon = True
        started = time.monotonic()
        try:
            child.start()
            send.close()
            answer = _wait(receive, started + timeout_s)
            if answer is None:
                _log.warning(
                    "extraction child %s killed after %.1f s (bound %g s, %s bytes)",
                    child.pid,
                    time.monotonic() - started,
                    timeout_s,
                    len(data),
                )
                raise TimeoutError(f"extraction passed {timeout_s:g} s and was stopped")
        finally:
            send.close()
            receive.close()
            if child.pid is not None:
                if child.is_alive():
                    child.kill()
                child.join()
                child.close()
    return _answer(answer)


def _wait(receive: Any, deadline: float) -> tuple[Any, ...] | None:
    """The child's answer, ``("crashed",)`` if it died without one, None at the deadline."""
    if not receive.poll(max(0.0, deadline - time.monotonic())):
        return None
    try:
        return receive.recv()  # type: ignore[no-any-return]
    except EOFError:
        return ("crashed",)


@functools.cache
def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


def _extract_child(send: Any, path: str, max_chars: int | None, options: dict[str, str]) -> None:
    answer: tuple[Any, ...]
    try:
        with open(path, "rb") as raw:
            data = raw.read()
        answer = ("ok", extract(data, max_chars=max_chars, **options))
    except TooLong as exc:
        answer = ("too_long", exc.chars, exc.limit)
    except ExtractionError as exc:
        answer = ("refused", exc.reason, str(exc))
    except Exception as exc:  # re-raised in the parent, which cannot unpickle every kind
        answer = ("raised", f"{type(exc).__name__}: {exc}")
    send.send(answer)
    send.close()


def _answer(answer: tuple[Any, ...]) -> Extracted:
    kind = answer[0]
    if kind == "ok":
        return answer[1]  # type: ignore[no-any-return]
    if kind == "too_long":
        raise TooLong(answer[1], answer[2])
    if kind == "refused":
        raise ExtractionError(answer[1], answer[2])
    if kind == "raised":
        raise RuntimeError(f"extraction failed in its child process: {answer[1]}")
    raise ExtractionError(
        "crashed",
        "the extractor stopped without an answer (it may have run out of memory on this "
        "file); split it or convert it to plain text",
    )
