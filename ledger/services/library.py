"""Libraries: named collections of sources (imported corpora, uploads), and who may use them.

Access, in one place (views, stages and commands ask these functions):

* **read** a library: its owner; its members (a user, or a team they belong to); the
  owner and members of a plan that searches it (``Plan.library``) or whose web
  captures it holds (``capture_for``); everyone signed in when it is ``public``;
  superusers.
* **write** (upload into) a library: its owner and members with ``write`` access;
  never a plan's capture library, which only that plan's runs fill.
* a **plan may search** a library its owner may read on their own (not merely as a
  member of some plan), or its own capture library.
* a **source** is readable when it is in a readable library or a run of a plan the
  user may see found it. Strangers get 404 for the rest, never a hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from ledger.models import Library, LibraryAccess, Passage, SearchHit, Source
from ledger.services.ingest import DocumentInput, IngestProgress, IngestResult, ingest_documents
from research.roles import can_edit_plans

CAPTURE_PREFIX = "web captures of plan "


class LibraryRefused(Exception):
    """The user may not do this with that library; the message says why."""


# --- access ---------------------------------------------------------------------------


def _own_access(user: Any) -> Q:
    """Libraries the user reaches by themselves: owned, shared with them or their teams."""
    return Q(owner=user) | Q(members__user=user) | Q(members__team__in=user.groups.all())


def readable_libraries(user: Any) -> QuerySet[Library]:
    if not getattr(user, "is_authenticated", False):
        return Library.objects.none()
    if user.is_superuser:
        return Library.objects.all()
    via_plans = (
        Q(plans__owner=user)
        | Q(plans__members=user)
        | Q(capture_for__owner=user)
        | Q(capture_for__members=user)
    )
    ids = Library.objects.filter(Q(public=True) | _own_access(user) | via_plans).values("pk")
    return Library.objects.filter(pk__in=ids)


def writable_libraries(user: Any) -> QuerySet[Library]:
    """Libraries the user may upload into (never a plan's capture library)."""
    if not getattr(user, "is_authenticated", False):
        return Library.objects.none()
    libraries = Library.objects.filter(capture_for__isnull=True)
    if user.is_superuser:
        return libraries
    shared = Q(members__user=user) | Q(members__team__in=user.groups.all())
    ids = libraries.filter(
        Q(owner=user) | (shared & Q(members__access=LibraryAccess.WRITE))
    ).values("pk")
    return Library.objects.filter(pk__in=ids)


def can_read_library(user: Any, library: Library) -> bool:
    return readable_libraries(user).filter(pk=library.pk).exists()


def can_write_library(user: Any, library: Library) -> bool:
    return writable_libraries(user).filter(pk=library.pk).exists()


def plan_may_search(plan: Any, library: Library) -> bool:
    """A plan searches a library its owner reads on their own, or its own captures."""
    if library.capture_for_id == plan.pk or library.public:
        return True
    owner = plan.owner
    if owner.is_superuser:
        return True
    return Library.objects.filter(_own_access(owner), pk=library.pk).exists()


def library_choices_for_plan(user: Any) -> QuerySet[Library]:
    """What a plan editor may point a plan at: public or the user's own or shared ones."""
    if user.is_superuser:
        return Library.objects.filter(capture_for__isnull=True)
    ids = Library.objects.filter(
        Q(public=True) | _own_access(user), capture_for__isnull=True
    ).values("pk")
    return Library.objects.filter(pk__in=ids)


def get_library_for_user(user: Any, code: UUID, *, write: bool = False) -> Library:
    library = readable_libraries(user).filter(code=code).first()
    if library is None:
        raise Http404("No such library")
    if write and not can_write_library(user, library):
        raise LibraryRefused(f"You may read {library.name!r} but not add documents to it.")
    return library


def readable_sources(user: Any) -> QuerySet[Source]:
    if not getattr(user, "is_authenticated", False):
        return Source.objects.none()
    if user.is_superuser:
        return Source.objects.all()
    in_libraries = Source.libraries.through.objects.filter(
        library__in=readable_libraries(user)
    ).values("source_id")
    plans = Q(run__plan_version__plan__owner=user) | Q(run__plan_version__plan__members=user)
    found_by_runs = SearchHit.objects.filter(plans, source__isnull=False).values("source_id")
    return Source.objects.filter(Q(pk__in=in_libraries) | Q(pk__in=found_by_runs))


def get_source_for_user(user: Any, code: UUID) -> Source:
    source = readable_sources(user).filter(code=code).first()
    if source is None:
        raise Http404("No such source")
    return source


# --- writes ---------------------------------------------------------------------------


def do_create_library(name: str, owner: User | None, *, public: bool = False) -> Library:
    """A new library of ``owner`` (private unless ``public``); the name is theirs alone."""
    name = name.strip()
    if Library.objects.filter(owner=owner, name=name).exists():
        raise LibraryRefused(f"You already have a library named {name!r}; pick it instead.")
    return Library.objects.create(name=name, owner=owner, public=public)


def get_or_create_library(
    name: str, owner: User | None = None, *, public: bool | None = None
) -> Library:
    """The library ``name`` of ``owner``, made if missing.

    An ownerless library is an operator's import (``import_corpus``, benchmarks): public
    unless ``public=False``. A user's library is private unless ``public=True``.
    """
    library, _ = Library.objects.get_or_create(
        name=name, owner=owner, defaults={"public": owner is None if public is None else public}
    )
    return library


def web_capture_library_name(plan_code: object) -> str:
    """Web pages a plan's runs fetch go into the plan's own capture library."""
    return f"{CAPTURE_PREFIX}{plan_code}"


def get_web_capture_library(plan_code: UUID | str) -> Library | None:
    return Library.objects.filter(capture_for__code=plan_code).first()


def do_get_web_capture_library(plan_code: UUID | str) -> Library:
    """The plan's own library of web captures, made on first use: owned by the plan's
    owner, readable by the plan's members, written only by its runs."""
    from research.models import Plan

    with transaction.atomic():
        library = get_web_capture_library(plan_code)
        if library is None:
            plan = Plan.objects.get(code=plan_code)
            library, _ = Library.objects.get_or_create(
                name=web_capture_library_name(plan_code),
                owner=plan.owner,
                defaults={"capture_for": plan},
            )
    return library


def plan_library_ids(plan: Any) -> tuple[int, ...]:
    """Libraries a run of the plan retrieves from: its library (if it may) and captures."""
    ids = []
    if plan.library_id and plan_may_search(plan, plan.library):
        ids.append(plan.library_id)
    captures = Library.objects.filter(capture_for=plan).values_list("pk", flat=True).first()
    if captures:
        ids.append(captures)
    return tuple(ids)


def do_import_corpus(
    docs: Sequence[DocumentInput],
    library_name: str,
    *,
    progress: IngestProgress | None = None,
    batch_size: int = 256,
    owner: User | None = None,
    public: bool | None = None,
    **options: Any,
) -> list[IngestResult]:
    """Ingest corpus documents into the named library (created when missing; see
    ``get_or_create_library`` for who may read it)."""
    library = get_or_create_library(library_name, owner, public=public)
    return ingest_documents(
        docs, library, progress=progress, batch_size=batch_size, total=len(docs), **options
    )


def can_upload(user: Any) -> bool:
    """Researchers and staff add documents (into libraries they may write)."""
    return can_edit_plans(user)


def filter_sources(user: Any, filters: dict[str, Any]) -> QuerySet[Source]:
    """The library table: the user's readable sources with snapshot counts and cluster sizes."""
    sources = readable_sources(user)
    if filters.get("library"):
        sources = sources.filter(libraries=filters["library"])
    if filters.get("source_type"):
        sources = sources.filter(source_type=filters["source_type"])
    if filters.get("cluster"):
        sources = sources.filter(cluster=filters["cluster"])
    if filters.get("q"):
        term = filters["q"].strip()
        sources = sources.filter(Q(title__icontains=term) | Q(canonical_id__icontains=term))
    cluster_size = (
        readable_sources(user)
        .filter(cluster=OuterRef("cluster"))
        .exclude(cluster="")
        .values("cluster")
        .annotate(n=Count("pk"))
        .values("n")
    )
    sources = sources.annotate(
        snapshot_count=Count("snapshots", distinct=True),
        cluster_size=Coalesce(Subquery(cluster_size), 1),
    )
    if filters.get("duplicates"):
        sources = sources.filter(cluster_size__gt=1)
    return sources.order_by("-created_at", "-pk")


def passage_marks(text: str, passages: Sequence[Passage]) -> list[dict[str, Any]]:
    """Split ``text`` at every chunk boundary; each piece lists the boundaries before it.

    Chunks overlap, so boundaries are markers between pieces, never nested elements:
    the template renders each piece's text autoescaped after its markers.
    """
    marks: dict[int, list[tuple[str, int]]] = {}
    for number, passage in enumerate(passages, start=1):
        marks.setdefault(passage.start, []).append(("start", number))
        marks.setdefault(passage.end, []).append(("end", number))
    cuts = sorted({0, len(text), *marks})
    pieces = []
    for start, end in zip(cuts, cuts[1:] + [len(text)], strict=True):
        here = sorted(marks.get(start, []), key=lambda m: (m[0] == "start", m[1]))
        pieces.append({"marks": here, "text": text[start:end]})
    return pieces
