"""Typed readers for environment variables.

Each helper raises ``ImproperlyConfigured`` naming the variable when its value is
malformed, so a bad deployment stops at start-up with a message a person can act on.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def envfloat(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def envlist(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


_FAMILY_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


def envjudges(name: str) -> list[tuple[str, str, str]]:
    """``family|base_url|model`` entries separated by ``;``: one LLM judge family each.

    The family name (lower case, at most 20 characters) is what votes, the quorum and
    ``VERIFIER_SHADOW`` call the judge; two judges may not share one.
    """
    raw = os.environ.get(name, "")
    judges: list[tuple[str, str, str]] = []
    for entry in (e.strip() for e in raw.split(";")):
        if not entry:
            continue
        parts = [p.strip() for p in entry.split("|")]
        if len(parts) != 3 or not all(parts):
            raise ImproperlyConfigured(
                f"{name}: each entry is family|base_url|model, got {entry!r}"
            )
        family, url, model = parts
        if len(family) > 20 or not set(family) <= _FAMILY_CHARS:
            raise ImproperlyConfigured(
                f"{name}: family {family!r} must be lower-case letters, digits or '-', "
                "at most 20 characters"
            )
        if urlparse(url).scheme not in {"http", "https"}:
            raise ImproperlyConfigured(f"{name}: {url!r} is not an http(s) URL")
        if family in {j[0] for j in judges}:
            raise ImproperlyConfigured(f"{name}: family {family!r} is listed twice")
        judges.append((family, url, model))
    return judges


def envsecret(name: str, *, required: bool, dev_default: str) -> str:
    """A secret that production must set; development gets ``dev_default``."""
    raw = os.environ.get(name, "")
    if raw:
        if required and len(raw) < 32:
            raise ImproperlyConfigured(f"{name} must be at least 32 characters long")
        return raw
    if required:
        raise ImproperlyConfigured(f"{name} is required when DJANGO_DEBUG is false")
    return dev_default


def local_secret_key(path: Path) -> str:
    """A key made once for this install and kept (mode 0600) in ``path``.

    Only for a local install (the embedded database, or ``DJANGO_DEBUG``): a deployment
    with its own DATABASE_URL must set DJANGO_SECRET_KEY. Every process of the install
    reads the same key: web processes starting together race to create the file, and the
    first to link its complete file wins (``os.link`` fails on an existing name), so no
    process keeps a key another overwrote (which would sign users out at random).
    """
    key = _read_key(path)
    if key:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(secrets.token_urlsafe(50) + "\n")
    try:
        os.link(draft, path)
    except FileExistsError:
        # Another process made it first (use theirs), or an old file holds no usable key
        # (links publish whole files only, so a short one is not a race: replace it).
        if not _read_key(path):
            os.replace(draft, path)
    finally:
        draft.unlink(missing_ok=True)
    key = _read_key(path)
    if not key:
        raise ImproperlyConfigured(f"{path} holds no usable secret key; delete it")
    return key


def _read_key(path: Path) -> str:
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        return ""
    return key if len(key) >= 32 else ""


def envdatabase(name: str) -> dict[str, object]:
    """Parse a ``postgres://`` URL into a Django DATABASES entry."""
    import dj_database_url

    raw = os.environ.get(name, "")
    if not raw:
        raise ImproperlyConfigured(
            f"{name} is not set (manage.py sets it to the embedded Postgres when unset)"
        )
    parsed = urlparse(raw)
    if parsed.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ImproperlyConfigured(
            f"{name} must be a postgres:// or postgresql:// URL, got scheme {parsed.scheme!r}"
        )
    try:
        config = dict(dj_database_url.parse(raw, conn_max_age=0))
    except Exception as exc:  # dj_database_url raises several types
        raise ImproperlyConfigured(f"{name} is malformed: {exc}") from None
    options: dict[str, Any] = dict(config.get("OPTIONS") or {})  # type: ignore[call-overload]
    if "host" in options:  # a Unix-socket folder given as ?host=
        config["HOST"] = options.pop("host")
        config["OPTIONS"] = options
    if not config.get("NAME"):
        raise ImproperlyConfigured(f"{name} names no database")
    if not config.get("HOST"):
        raise ImproperlyConfigured(f"{name} names no host (or host= socket folder)")
    return config
