"""Canonical identity of a document: normalized URLs, DOIs, arXiv ids, content hashes.

Pure functions, no I/O. ``canonical_id`` picks one identity per document with this
precedence (first present wins):

1. ``doi:<doi>`` — lower-cased (DOIs are case-insensitive). An arXiv DataCite DOI
   (``10.48550/arXiv.<id>``) is the arXiv paper itself and becomes ``arxiv:<id>``.
2. ``arxiv:<id>`` — without its version suffix (``v2``): versions are one work.
3. DOIs and arXiv ids found in ``url`` — only from resolvers and known URL shapes
   (doi.org, ``/doi/10.…`` publisher paths, arxiv.org), never from arbitrary text in a
   URL, so a blog post that mentions a DOI keeps its own identity.
4. ``url:<normalized url>`` (see ``normalize_url``).
5. ``sha256:<hex>`` of the content, for files with no URL.

A DOI outranks an arXiv id so that a preprint and its journal version (which arXiv
records as ``arxiv:doi``) collapse into one Source. Identities longer than
``MAX_ID_LENGTH`` keep a prefix plus a sha256 of the whole so they stay unique.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from research.pipeline.language.formats import (
    ARXIV_DOI,
    ARXIV_ID,
    ARXIV_PATH,
    ARXIV_TEXT,
    DOI_PATH,
    DOI_TEXT,
    DOI_URL,
    DOI_VALID,
)

MAX_ID_LENGTH = 600
DEFAULT_PORTS = {"http": 80, "https": 443}

# Query parameters that identify a campaign or a click, never the document.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "ttclid",
        "li_fat_id",
        "igshid",
        "mc_cid",
        "mc_eid",
        "mkt_tok",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "hsctatracking",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "vero_conv",
        "wickedid",
        "rb_clickid",
        "s_cid",
        "ref_src",
        "ref_url",
        "cmpid",
        "spm",
    }
)
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hmb_")

# The patterns of DOIs and arXiv ids are research.pipeline.language.formats's.
_DOI_HOSTS = frozenset({"doi.org", "dx.doi.org", "www.doi.org"})
_DOI_TAILS = (".full.pdf", ".full", ".pdf", ".abstract", "/full", "/abstract", "/pdf", "/epdf")
_TRAILING_PUNCT = ".,;:!?'\""
_ARXIV_HOSTS = frozenset({"arxiv.org", "www.arxiv.org", "export.arxiv.org"})
_VERSION_RE = re.compile(r"v\d+$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_UNRESERVED = "-._~"
_PATH_SAFE = "/" + _UNRESERVED + "!$&'()*+,;=:@%"
_PCT_RE = re.compile(r"%([0-9A-Fa-f]{2})")
# The dots IDNA (RFC 3490 3.1) reads as label separators: full stop, ideographic,
# full-width and half-width ideographic full stops.
_IDNA_DOTS = re.compile("[\u002e\u3002\uff0e\uff61]")
_MAX_PASSES = 16  # each pass that changes a DOI shortens it or only lower-cases it


# -- URLs ---------------------------------------------------------------------------


def is_tracking_param(name: str) -> bool:
    key = name.lower()
    return key in TRACKING_PARAMS or key.startswith(TRACKING_PREFIXES)


def normalize_url(url: str) -> str:
    """Return one spelling of ``url`` for identity; raise ValueError if it is not absolute.

    Lower-cases scheme and host (IDNA-encoding non-ASCII hosts), drops credentials,
    default ports, fragments and tracking parameters, resolves ``.``/``..`` segments,
    normalizes percent-escapes, sorts the query, and removes a trailing slash from any
    path but the root (``/docs/`` and ``/docs`` name one page on nearly every server).
    ``www.`` is kept: it is a different host name.
    """
    parts = urlsplit(url.strip())  # raises ValueError on an unparseable netloc
    scheme = parts.scheme.lower()
    if not scheme or not parts.netloc or not _IDNA_DOTS.sub(".", parts.hostname or "").strip("."):
        raise ValueError(f"not an absolute URL with a host: {url!r}")
    netloc = _normalize_netloc(scheme, parts.hostname or "", parts.port)
    path = _normalize_path(parts.path)
    query = _normalize_query(parts.query)
    return urlunsplit((scheme, netloc, path, query, ""))


def _normalize_netloc(scheme: str, host: str, port: int | None) -> str:
    host = _IDNA_DOTS.sub(".", host).rstrip(".")  # "example.com。" is "example.com"
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        host = host.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is None or DEFAULT_PORTS.get(scheme) == port:
        return host
    return f"{host}:{port}"


def _normalize_path(path: str) -> str:
    if not path:
        return "/"
    # Escapes of unreserved characters first: "%2E%2E" is a ".." segment to resolve.
    clean = posixpath.normpath(_PCT_RE.sub(_fix_escape, path))
    if clean.startswith("//"):  # normpath keeps a leading double slash
        clean = "/" + clean.lstrip("/")
    clean = quote(clean, safe=_PATH_SAFE)
    return clean if clean == "/" else clean.rstrip("/") or "/"


def _fix_escape(match: re.Match[str]) -> str:
    """Decode escapes of unreserved characters; upper-case the rest (RFC 3986 6.2.2)."""
    char = chr(int(match.group(1), 16))
    if char.isascii() and (char.isalnum() or char in _UNRESERVED):
        return char
    return match.group(0).upper()


def _normalize_query(query: str) -> str:
    pairs = [
        (key, value)
        for key, value in parse_qsl(query, keep_blank_values=True)
        if not is_tracking_param(key)
    ]
    return urlencode(sorted(pairs), quote_via=quote, safe=_UNRESERVED)


def host_of(url: str) -> str:
    """Lower-case host of ``url`` without a trailing dot ('' if it has none or is unparseable)."""
    parts = _split(url)
    return (_hostname(parts) if parts else "").rstrip(".").lower()


def _split(url: str) -> SplitResult | None:
    """``urlsplit``, or None for text it refuses (``http://[]``, a fullwidth ``＃`` …)."""
    try:
        return urlsplit(url.strip())
    except ValueError:
        return None


def _hostname(parts: SplitResult) -> str:
    try:
        return parts.hostname or ""
    except ValueError:
        return ""


def _looks_like_url(text: str) -> bool:
    stripped = text.strip()
    return "://" in stripped and not any(ch.isspace() for ch in stripped)


# -- DOIs ---------------------------------------------------------------------------


def normalize_doi(doi: str) -> str:
    """Lower-case a bare DOI, dropping a resolver prefix, trailing punctuation and tails.

    Percent-escapes are decoded until none is left (a doubly escaped ``%252F`` is a
    ``/``), control characters dropped, and every step repeated until nothing changes,
    so a normalized DOI normalizes to itself.
    """
    value = doi
    for _ in range(_MAX_PASSES):
        before = value
        value = _unquote_fully(value).strip()
        value = "".join(ch for ch in value if ch.isprintable())
        value = re.sub(r"^(?:doi:\s*|https?://(?:dx\.|www\.)?doi\.org/)", "", value, flags=re.I)
        value = _strip_trailing(value).strip()
        for tail in _DOI_TAILS:
            if value.lower().endswith(tail):
                value = value[: -len(tail)]
        value = value.lower()
        if value == before:
            break
    return value


def _unquote_fully(value: str) -> str:
    for _ in range(_MAX_PASSES):
        decoded = unquote(value)
        if decoded == value:
            break
        value = decoded
    return value


def _strip_trailing(value: str) -> str:
    while value and value[-1] in _TRAILING_PUNCT:
        value = value[:-1]
    for opener, closer in (("(", ")"), ("[", "]"), ("{", "}")):
        while value.endswith(closer) and value.count(closer) > value.count(opener):
            value = value[:-1]
    return value


def extract_doi(text: str) -> str | None:
    """First DOI in ``text``, normalized; URLs only yield resolver or ``/doi/`` DOIs."""
    if not text:
        return None
    if _looks_like_url(text):
        return doi_from_url(text)
    match = DOI_TEXT.search(text)
    return normalize_doi(match.group(0)) if match else None


def doi_from_url(url: str) -> str | None:
    parts = _split(url)
    if parts is None:
        return None
    host = _hostname(parts).lower()
    path = unquote(parts.path)
    if host in _DOI_HOSTS:
        match = DOI_URL.match(path.lstrip("/"))
        return normalize_doi(match.group(0)) if match else None
    found = DOI_PATH.search(path)
    if found:
        return normalize_doi(found.group(1))
    return _doi_from_query(parts.query)


def _doi_from_query(query: str) -> str | None:
    for key, value in parse_qsl(query):
        if key.lower() in {"doi", "id"} and DOI_URL.fullmatch(value.strip()):
            return normalize_doi(value)
    return None


# -- arXiv --------------------------------------------------------------------------


def normalize_arxiv_id(arxiv_id: str) -> str:
    """Strip prefixes and the version suffix: ``arXiv:2101.00001v2`` -> ``2101.00001``."""
    value = re.sub(r"^(?:arxiv\s*:\s*)", "", arxiv_id.strip(), flags=re.I)
    value = _strip_trailing(value).strip()  # "arXiv:2101.00001." at the end of a sentence
    if not ARXIV_ID.fullmatch(value):
        raise ValueError(f"not an arXiv id: {arxiv_id!r}")
    value = _VERSION_RE.sub("", value)
    if "/" in value:  # old style: archive lower-case, subject class upper-case
        archive, number = value.split("/", 1)
        name, _, subject = archive.partition(".")
        archive = name.lower() + (f".{subject.upper()}" if subject else "")
        value = f"{archive}/{number}"
    return value


def extract_arxiv_id(text: str) -> str | None:
    """arXiv id (no version) from an arxiv.org URL, ``arXiv:…`` text or an arXiv DOI."""
    if not text:
        return None
    if _looks_like_url(text):
        return arxiv_id_from_url(text)
    match = ARXIV_TEXT.search(text)
    return normalize_arxiv_id(match.group(1)) if match else None


def arxiv_id_from_url(url: str) -> str | None:
    parts = _split(url)
    if parts is None:
        return None
    host = _hostname(parts).lower()
    if host in _DOI_HOSTS:
        doi = doi_from_url(url)
        return _arxiv_from_doi(doi) if doi else None
    if host not in _ARXIV_HOSTS:
        return None
    path = re.sub(r"\.pdf$", "", unquote(parts.path), flags=re.I)
    match = ARXIV_PATH.match(path)
    return normalize_arxiv_id(match.group(1)) if match else None


def _arxiv_from_doi(doi: str) -> str | None:
    match = ARXIV_DOI.match(doi)
    if not match or not ARXIV_ID.match(match.group(1)):
        return None
    return normalize_arxiv_id(match.group(1))


# -- canonical id -------------------------------------------------------------------


def canonical_id(
    url: str | None = None,
    doi: str | None = None,
    arxiv_id: str | None = None,
    content_sha256: str | None = None,
) -> str:
    """One identity per document, by the precedence in this module's docstring."""
    explicit = _identifier_id(normalize_doi(doi) if doi else None, arxiv_id)
    if explicit:
        return explicit
    if url:
        found = _identifier_id(doi_from_url(url), arxiv_id_from_url(url))
        return found or _bounded("url:" + normalize_url(url))
    if content_sha256:
        digest = content_sha256.strip().lower()
        if not _SHA256_RE.match(digest):
            raise ValueError(f"not a sha256 hex digest: {content_sha256!r}")
        return "sha256:" + digest
    raise ValueError("canonical_id needs a url, doi, arxiv_id or content_sha256")


def lenient_canonical_id(url: str = "", doi: str = "", arxiv_id: str = "") -> str | None:
    """``canonical_id`` of everything given, where a malformed DOI or arXiv id falls back to
    the URL (a search result or a report's reference with a mistyped DOI is still the page
    it links); None when nothing identifies the document."""
    for link, doi_value, arxiv_value in ((url, doi, arxiv_id), (url, "", "")):
        try:
            return canonical_id(
                url=link or None, doi=doi_value or None, arxiv_id=arxiv_value or None
            )
        except ValueError:
            continue
    return None


def _identifier_id(doi: str | None, arxiv_id: str | None) -> str | None:
    if doi:
        if not DOI_VALID.match(doi):
            raise ValueError(f"not a DOI: {doi!r}")
        as_arxiv = _arxiv_from_doi(doi)
        return _bounded(f"arxiv:{as_arxiv}" if as_arxiv else f"doi:{doi}")
    if arxiv_id:
        return _bounded("arxiv:" + normalize_arxiv_id(arxiv_id))
    return None


def _bounded(identity: str) -> str:
    if len(identity) <= MAX_ID_LENGTH:
        return identity
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()
    return f"{identity[: MAX_ID_LENGTH - 72]}#sha256={digest}"
