"""Library pages: the source table, a source's snapshot with passage boundaries, uploads."""

from __future__ import annotations

from urllib.parse import urlsplit
from uuid import UUID

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from ledger.forms import SourceFilterForm, UploadForm
from ledger.models import PassageKind, Upload, UploadStatus
from ledger.services.ingest import format_duration, remaining_seconds
from ledger.services.library import (
    LibraryRefused,
    can_upload,
    do_create_library,
    filter_sources,
    get_source_for_user,
    passage_marks,
    readable_libraries,
    readable_sources,
)
from ledger.services.uploads import do_queue_uploads, recent_batches
from research.http import AuthedHttpRequest

PAGE_SIZE = 50


@require_GET
def list_sources(request: AuthedHttpRequest) -> HttpResponse:
    form = SourceFilterForm(request.user, request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    sources = filter_sources(request.user, filters)
    page = Paginator(sources, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "libraries": readable_libraries(request.user),
        "upload_form": UploadForm(request.user) if can_upload(request.user) else None,
        "recent_batches": recent_batches(request.user),
    }
    template = "ledger/source_list.html" + ("#source-table" if request.htmx else "")
    return render(request, template, context)


@require_GET
def show_source(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    source = get_source_for_user(request.user, code)
    snapshots = list(source.snapshots.order_by("-fetched_at", "-pk"))
    wanted = request.GET.get("snapshot", "")
    snapshot = next((s for s in snapshots if str(s.code) == wanted), None)
    if snapshot is None and wanted:
        raise Http404("No such snapshot of this source.")
    snapshot = snapshot or (snapshots[0] if snapshots else None)
    passages = list(snapshot.passages.order_by("kind", "start", "end")) if snapshot else []
    chunks = [p for p in passages if p.kind == PassageKind.CHUNK]
    context = {
        "source": source,
        "snapshots": snapshots,
        "snapshot": snapshot,
        "passages": passages,
        "pieces": passage_marks(snapshot.text, chunks) if snapshot else [],
        "copies": readable_sources(request.user)
        .filter(cluster=source.cluster)
        .exclude(pk=source.pk)
        if source.cluster
        else [],
        "libraries": readable_libraries(request.user).filter(sources=source),
    }
    return render(request, "ledger/source_detail.html", context)


@require_POST
def create_upload(request: AuthedHttpRequest) -> HttpResponse:
    if not can_upload(request.user):
        raise PermissionDenied("Only researchers may add documents.")
    form = UploadForm(request.user, request.POST, request.FILES)
    if form.is_valid() and not form.cleaned_data["library"]:
        try:
            form.cleaned_data["library"] = do_create_library(
                form.cleaned_data["new_library"], request.user
            )
        except LibraryRefused as exc:
            form.add_error("new_library", str(exc))
    if not form.is_valid():
        return render(request, "ledger/_upload_form.html", {"upload_form": form}, status=400)
    library = form.cleaned_data["library"]
    batch = do_queue_uploads(library, request.user, form.cleaned_data["documents"])
    if request.htmx or request.headers.get("x-requested-with") == "XMLHttpRequest":
        return _render_batch(request, batch, partial=True, on_library=True)
    return redirect("ledger-show-upload-batch", batch=batch)


@require_GET
def show_upload_batch(request: AuthedHttpRequest, batch: UUID) -> HttpResponse:
    on_library = request.GET.get("on") == "library"  # polled from the library page
    return _render_batch(request, batch, partial=bool(request.htmx), on_library=on_library)


def _render_batch(
    request: AuthedHttpRequest, batch: UUID, *, partial: bool, on_library: bool = False
) -> HttpResponse:
    """The batch's status; polled from the library page, its last answer also brings that
    page's library pickers (the new library among them) and tells the source table to
    reload, so neither needs the page reloaded."""
    uploads = Upload.objects.filter(batch=batch).select_related("source", "library")
    if not request.user.is_superuser:  # a staff flag opens the admin, not others' uploads
        uploads = uploads.filter(uploaded_by=request.user)
    uploads_list = list(uploads.order_by("pk"))
    if not uploads_list:
        raise Http404("No such upload.")
    pending = [u for u in uploads_list if u.status in {UploadStatus.QUEUED, UploadStatus.RUNNING}]
    done = len(uploads_list) - len(pending)
    context = {
        "batch": batch,
        "uploads": uploads_list,
        "library": uploads_list[0].library,
        "pending": len(pending),
        "done": done,
        "eta": _upload_eta(uploads_list, done) if pending else "",
        "on_library": on_library,
    }
    finished_here = on_library and partial and not pending and bool(request.htmx)
    if finished_here:
        context |= _library_pickers(request)
    template = "ledger/upload_batch.html" + ("#upload-batch" if partial else "")
    response = render(request, template, context)
    if finished_here:
        trigger_client_event(response, "library-changed", after="settle")
    return response


def _library_pickers(request: AuthedHttpRequest) -> dict[str, object]:
    """The library page's two library pickers, its filter as the page's address has it."""
    query = QueryDict(urlsplit(request.htmx.current_url or "").query)
    return {
        "library_changed": True,
        "upload_form": UploadForm(request.user),
        "form": SourceFilterForm(request.user, query),
    }


def _upload_eta(uploads: list[Upload], done: int) -> str:
    """Time left for a batch at the rate of its files so far (queue wait included)."""
    started = min(u.created_at for u in uploads)
    elapsed = (timezone.now() - started).total_seconds()
    left = remaining_seconds(done, len(uploads), elapsed)
    return format_duration(left) if left is not None else ""
