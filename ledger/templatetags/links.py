"""``{{ url|web_url }}``: a URL from source data, only if it is safe to make a link of it."""

from __future__ import annotations

from django import template

register = template.Library()

WEB_SCHEMES = ("http://", "https://")


@register.filter
def web_url(url: object) -> str:
    """The URL if it is http(s), else ''. ``javascript:``, ``data:`` and the rest stay text.

    Browsers drop leading spaces and control characters before reading a scheme, so
    the check runs on what they would see, and the URL must hold none of them at all.
    """
    text = str(url or "")
    if any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in text):
        return ""
    return text if text.lower().startswith(WEB_SCHEMES) else ""
