"""Markdown reports into a :class:`~research.pipeline.audit.layout.Layout`.

Headings, paragraphs, list items, quotes and table cells in order (markdown-it-py,
CommonMark with tables); reference and footnote definitions are taken out first
(``layout.take_definitions``); a raw HTML block is read as HTML
(``htmldoc.read_fragment``). Pure.
"""

from __future__ import annotations

from markdown_it import MarkdownIt

from research.pipeline.audit.htmldoc import read_fragment
from research.pipeline.audit.layout import Collector, Layout, take_definitions


def read_markdown(text: str) -> Layout:
    """Markdown's headings, paragraphs, list items, quotes and table cells, in order."""
    collector = Collector()
    tokens = MarkdownIt("commonmark").enable("table").parse(take_definitions(text, collector))
    containers: list[str] = []  # the open list items and quotes, innermost last
    number = ""  # an ordered list item's number, until its first paragraph takes it
    for index, token in enumerate(tokens):
        kind = token.type
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        line = token.map[0] if token.map else 0
        if kind in ("list_item_open", "blockquote_open"):
            containers.append("list-item" if kind == "list_item_open" else "quote")
            number = token.info if kind == "list_item_open" else ""
        elif kind in ("list_item_close", "blockquote_close") and containers:
            containers.pop()
        elif following is None or following.type != "inline":
            if kind == "html_block":
                read_fragment(token.content, collector)
        elif kind == "heading_open":
            collector.heading(following.content, int(token.tag[1:]))
        elif kind == "paragraph_open":
            collector.block(
                following.content, containers[-1] if containers else "paragraph", line, number
            )
            number = ""
        elif kind == "td_open":  # a table cell: body text (never a "Sources:" line)
            collector.block(following.content, "cell", line)
    return collector.layout
