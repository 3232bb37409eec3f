"""Rendered parts of the ledger and capsule pages, cached under a fingerprint of their data.

The ledger and capsule pages are read far more often than their data changes (every
reviewer of a plan reads the same ledger; a reviewer pages back and forth through the
queue), and most of their cost is Python: building model objects and rendering rows.
So the parts of these pages that do not depend on who asks (the ledger table, the counts
by subquestion, the gate, the queue position, the claim capsule with its evidence, votes
and decision history) are kept, rendered, in the ``fragments`` cache.

**Never stale, by construction.** A cached part is keyed by a *fingerprint*: an md5,
computed by Postgres in one query, over the full rows of every table the part is built
from (:func:`run_fingerprint`: the run's state and every column of its claims and their
subquestions; the claim's, from :func:`fingerprints`: the claim, its subquestion, its evidence links
with their passages, snapshots and sources, its votes and its decisions with the
reviewers' names). Any write to any of those rows, through the services or not, changes
the fingerprint, so the next request renders anew; nothing is ever invalidated by hand,
and no write path knows about the cache. The fingerprint and the rows rendered under it
are read in one REPEATABLE READ transaction (:func:`one_snapshot`), so a write that
commits in between cannot put one state's HTML under another state's key.

What depends on the user (the decide forms and their CSRF tokens, whether this user may
decide or approve, messages, the CSP nonce) is rendered on every request and never
cached. The cache is per process (``LocMemCache``, bounded by ``MAX_ENTRIES``).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import connection, transaction
from django.utils.safestring import SafeString, mark_safe

from ledger.models import (
    Candidate,
    Claim,
    ContestedPair,
    EvidenceLink,
    Passage,
    Snapshot,
    Source,
    VerifierVote,
)
from research.models import Run, Subquestion
from review.models import ReviewDecision
from review.readers import CONTEXT_CHARS

CACHE_ALIAS = "fragments"
T = TypeVar("T")


@contextmanager
def one_snapshot() -> Iterator[None]:
    """Run the queries inside against one committed state of the database.

    Outside a transaction this opens a REPEATABLE READ one (Postgres: every statement sees
    the snapshot taken at the first). Inside an outer transaction (a test's, or a view
    that already writes) that transaction's view of the data is used as it is.
    """
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def _table(model: Any) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _md5(sql: str, params: dict[str, Any]) -> str:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return str(row[0] if row else "")


def run_fingerprint(run: Run) -> str:
    """md5 over the run's state, every column of its claims and its subquestions, its
    contested pairs and its merged candidates' links."""
    return f"run:{run.pk}:" + _md5(f"SELECT {_run_md5()}", {"run": run.pk})


def fingerprints(run: Run, claim: Claim) -> tuple[str, str]:
    """The run's fingerprint (:func:`run_fingerprint`) and the claim's (:func:`_claim_md5`), in
    one query."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_run_md5()}, {_claim_md5()}", {"run": run.pk, "claim": claim.pk})
        row = cursor.fetchone()
    return f"run:{run.pk}:{row[0]}", f"claim:{claim.pk}:{row[1]}"


@functools.cache
def _run_md5() -> str:
    claim, subquestion, run_table = _table(Claim), _table(Subquestion), _table(Run)
    pair, candidate = _table(ContestedPair), _table(Candidate)
    # Also what the ledger shows of mining: contested pairs (badges in the table), every
    # subquestion of the run's plan version and which claims each one's search found too
    # (merged candidates: the "Also found" counts).
    return f"""
        md5(concat_ws('#',
            (SELECT r.state FROM {run_table} r WHERE r.id = %(run)s),
            (SELECT string_agg(c::text, '|' ORDER BY c.id) FROM {claim} c
              WHERE c.run_id = %(run)s),
            (SELECT string_agg(s::text, '|' ORDER BY s.id) FROM {subquestion} s
              WHERE s.id IN (SELECT c.subquestion_id FROM {claim} c WHERE c.run_id = %(run)s)
                 OR s.plan_version_id = (SELECT r.plan_version_id FROM {run_table} r
                                          WHERE r.id = %(run)s)),
            (SELECT string_agg(p::text, '|' ORDER BY p.id) FROM {pair} p
              WHERE p.run_id = %(run)s),
            (SELECT string_agg(concat_ws(',', k.id, k.subquestion_id, k.claim_id), '|'
                               ORDER BY k.id)
               FROM {candidate} k
              WHERE k.run_id = %(run)s AND k.state = 'merged' AND k.claim_id IS NOT NULL)
        ))
    """


@functools.cache
def _claim_md5() -> str:
    """md5 over everything the capsule shows of a claim.

    The claim and its subquestion (all columns); each evidence link (all columns) with its
    passage's bounds and text, its snapshot's code, capture time, length and the text
    around the quote (what :func:`review.readers.quote_in_context` cuts out and checks),
    and its source (all columns); every vote (all columns); every decision (all columns)
    with the reviewer's name and, for one carried over, the earlier claim it links to.
    """
    tables = {
        "claim": _table(Claim),
        "subq": _table(Subquestion),
        "link": _table(EvidenceLink),
        "passage": _table(Passage),
        "snapshot": _table(Snapshot),
        "source": _table(Source),
        "vote": _table(VerifierVote),
        "decision": _table(ReviewDecision),
        "user": _table(get_user_model()),
    }
    window = int(CONTEXT_CHARS)
    return """
        md5(concat_ws('#',
            (SELECT c::text FROM {claim} c WHERE c.id = %(claim)s),
            (SELECT s::text FROM {subq} s JOIN {claim} c ON c.subquestion_id = s.id
              WHERE c.id = %(claim)s),
            (SELECT string_agg(concat_ws(',', l::text, p.start, p."end", length(p.text),
                    md5(p.text), sn.code, sn.fetched_at, length(sn.text),
                    md5(substr(sn.text, greatest(1, l.quote_start - {window}),
                                l.quote_end - l.quote_start + 2 * {window} + 2)),
                    so::text), '|' ORDER BY l.id)
               FROM {link} l
               LEFT JOIN {passage} p ON p.id = l.passage_id
               LEFT JOIN {snapshot} sn ON sn.id = l.snapshot_id
               LEFT JOIN {source} so ON so.id = sn.source_id
              WHERE l.claim_id = %(claim)s),
            (SELECT string_agg(v::text, '|' ORDER BY v.id) FROM {vote} v
              WHERE v.claim_id = %(claim)s),
            (SELECT string_agg(concat_ws(',', d::text, u.username, carried.code), '|'
                               ORDER BY d.id)
               FROM {decision} d LEFT JOIN {user} u ON u.id = d.reviewer_id
               LEFT JOIN {decision} earlier ON earlier.id = d.carried_from_id
               LEFT JOIN {claim} carried ON carried.id = earlier.claim_id
              WHERE d.claim_id = %(claim)s)
        ))
    """.format(window=window, **tables)


def key(*parts: object) -> str:
    """A bounded cache key for a fingerprint and whatever else selects the part."""
    return "eb-fragment:" + hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


def cached(cache_key: str, build: Callable[[], T]) -> T:
    """The value kept under ``cache_key``, built (and kept) on a miss."""
    store = caches[CACHE_ALIAS]
    value = store.get(cache_key)
    if value is None:
        value = build()
        store.set(cache_key, value)
    return value  # type: ignore[no-any-return]


def cached_html(cache_key: str, render: Callable[[], str]) -> SafeString:
    """Rendered HTML kept under ``cache_key`` (it was escaped when it was rendered)."""
    return mark_safe(cached(cache_key, lambda: str(render())))  # noqa: S308
