"""An HTML report's layout: headings, paragraphs, list items, quotes and reference lists.

Parsed by lxml. Inline content becomes text in Markdown's citation forms, so one scanner
reads every format: a web link is written ``[words](href)``, an in-page link to a number
(``<a href="#ref-1">1</a>``) and a superscript number (``<sup>1</sup>``) are written
``[1]``. A block element's loose text between its child blocks is a block of its own.
An ``<ol>`` numbers its items (its ``start`` too) for reference lines; an element whose
class or id names a reference list (``<section class="footnotes">``) holds one, as does
the part under a reference heading. Scripts, styles, code and table headers say nothing.
"""

from __future__ import annotations

from typing import Any

from research.pipeline.audit.inline import NUMBER_LIST
from research.pipeline.audit.layout import Collector, Layout
from research.pipeline.language.citations import is_reference_heading

MAX_DEPTH = 200  # deeper elements are read as their text
# The inline tags HTML5 added to lxml's lists; any tag neither lists as inline is a block.
_HTML5_INLINE = ("mark", "time", "wbr", "ruby", "rt", "rp", "data", "output", "meter")
_SILENT = ("script", "style", "noscript", "template", "head", "pre", "code", "th", "svg", "math")


def read_html(text: str) -> Layout | None:
    """The layout of an HTML document; None when lxml cannot read it at all."""
    from lxml import html as lxml_html

    try:
        parser = lxml_html.HTMLParser(encoding="utf-8")
        root = lxml_html.document_fromstring(text.encode("utf-8"), parser=parser)
    except Exception:  # lxml refuses empty or hostile documents in several ways
        return None
    collector = Collector()
    title = root.find(".//title")
    if title is not None:
        collector.layout.title = " ".join(title.text_content().split())
    body = root.find("body")
    _container(root if body is None else body, collector, "paragraph", "", 0)
    return collector.layout


def read_fragment(html: str, collector: Collector) -> None:
    """A raw HTML block inside Markdown, read into the Markdown report's collector."""
    from lxml import html as lxml_html

    try:
        root = lxml_html.fragment_fromstring(html, create_parent="div")
    except Exception:  # lxml refuses some hostile or empty fragments: keep nothing of it
        return
    _container(root, collector, "paragraph", "", 0)


def _tag(element: Any) -> str:
    return element.tag.lower() if isinstance(element.tag, str) else ""


def _inline_tag(tag: str) -> bool:
    from lxml.html import defs

    return (
        tag in defs.phrase_tags
        or tag in defs.font_style_tags
        or tag in defs.special_inline_tags
        or tag in _HTML5_INLINE
    )


def _container(element: Any, collector: Collector, kind: str, number: str, depth: int) -> None:
    """An element's loose text as blocks of ``kind`` and its child blocks, in order.

    ``number`` (an ``<ol>`` item's) goes with its first block, loose text or a child's.
    """
    run = [element.text or ""]
    for child in element:
        tag = _tag(child)
        if tag in _SILENT or not tag:
            pass
        elif _inline_tag(tag):
            run.append(_inline(child, depth + 1))
        else:
            number = _flush(run, collector, kind, number)
            _block(child, collector, kind, depth + 1, number)
            run, number = [], ""
        run.append(child.tail or "")
    _flush(run, collector, kind, number)


def _flush(run: list[str], collector: Collector, kind: str, number: str) -> str:
    """Write a run of loose text as one block; the list number is used up once written."""
    words = " ".join("".join(run).split())
    if not words:
        return number
    collector.block(words, kind, number=number)
    return ""


def _block(element: Any, collector: Collector, kind: str, depth: int, number: str = "") -> None:
    tag = _tag(element)
    if tag in _SILENT or depth > MAX_DEPTH:
        return
    if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
        collector.heading(_inline(element, depth), int(tag[1]))
    elif tag in ("ol", "ul"):
        _list(element, collector, depth)
    elif tag == "blockquote":
        _container(element, collector, "quote", "", depth)
    elif tag == "li":
        _container(element, collector, "list-item", "", depth)
    elif _names_references(element) and not collector.in_references:
        collector.references_level = 0  # to the element's end, whatever its headings
        _container(element, collector, kind, number, depth)
        collector.references_level = None
    else:
        _container(element, collector, kind, number, depth)


def _list(element: Any, collector: Collector, depth: int) -> None:
    """A list's items as list-item blocks; an ``<ol>`` numbers them from its ``start``."""
    start = element.get("start", "1").strip()
    number = int(start) if start.isascii() and start.isdigit() and len(start) < 6 else 1
    for child in element:
        tag = _tag(child)
        if tag == "li":
            label = str(number) if _tag(element) == "ol" else ""
            _container(child, collector, "list-item", label, depth + 1)
            number += 1
        elif tag and tag not in _SILENT:
            _block(child, collector, "list-item", depth + 1)


def _names_references(element: Any) -> bool:
    names = f"{element.get('class', '')} {element.get('id', '')}".replace("-", " ").split()
    return any(is_reference_heading(name) for name in names)


def _inline(element: Any, depth: int) -> str:
    """An inline element's text; links and superscript numbers in Markdown's forms."""
    tag = _tag(element)
    if not tag or tag in _SILENT or tag == "img":
        return ""
    if tag == "br":
        return " "
    if depth > MAX_DEPTH:
        return str(element.text_content())
    inner = (element.text or "") + "".join(
        _inline(child, depth + 1) + (child.tail or "") for child in element
    )
    if tag == "a" and element.get("href"):
        return _anchor(element.get("href"), inner)
    if tag == "sup":
        numbers = NUMBER_LIST.fullmatch(inner.strip())
        return f"[{numbers.group(1)}]" if numbers else inner
    return inner


def _anchor(href: str, inner: str) -> str:
    """A link as Markdown: ``[words](href)``; an in-page link to a number as ``[n]``."""
    words = " ".join(inner.split())
    href = "".join(href.split()).strip("<>")
    numbers = NUMBER_LIST.fullmatch(words)
    if href.startswith("#"):
        return f"[{numbers.group(1)}]" if numbers else words
    words = numbers.group(1) if numbers else words.replace("[", "(").replace("]", ")")
    if any(ch in href for ch in "()<>"):
        href = href.replace("<", "%3C").replace(">", "%3E")
        return f"[{words or href}](<{href}>)"
    return f"[{words or href}]({href})"
