"""Libraries are private by default: strangers neither read nor write another's library."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from ledger.models import Library, LibraryMember, Passage, Source, Upload
from ledger.services.library import (
    can_read_library,
    can_write_library,
    do_get_web_capture_library,
    plan_library_ids,
    plan_may_search,
)
from ledger.services.uploads import do_ingest_uploads
from research import services
from tests.factories import make_library, make_plan, make_run

pytestmark = pytest.mark.django_db

SECRET = b"Confidential trial notes: the interim analysis showed a 12 percent drop in falls."


def _upload(client, **data):
    return client.post(
        reverse("ledger-create-upload"), data, HTTP_X_REQUESTED_WITH="XMLHttpRequest"
    )


@pytest.fixture
def private_upload(client, author, django_capture_on_commit_callbacks):
    """The author's own new library with one ingested note."""
    client.force_login(author)
    with django_capture_on_commit_callbacks(execute=False):
        response = _upload(
            client,
            new_library="Author notes",
            documents=[SimpleUploadedFile("notes.txt", SECRET, content_type="text/plain")],
        )
    assert response.status_code == 200
    do_ingest_uploads(Upload.objects.get().batch)
    library = Library.objects.get(name="Author notes")
    assert library.owner == author and not library.public
    return library, Source.objects.get(libraries=library)


def test_it_hides_a_private_library_and_its_sources_from_others(
    client, private_upload, outsider, django_user_model
):
    library, source = private_upload
    no_role = django_user_model.objects.create_user("norole", password="pw-norole")
    for user in (outsider, no_role):
        client.force_login(user)
        listing = client.get(reverse("ledger-list-sources")).content.decode()
        assert "Author notes" not in listing and "notes.txt" not in listing
        assert client.get(source.get_absolute_url()).status_code == 404
        filtered = client.get(reverse("ledger-list-sources"), {"library": str(library.code)})
        assert "notes.txt" not in filtered.content.decode()


def test_it_refuses_uploads_into_another_users_library(client, private_upload, outsider):
    library, _ = private_upload
    client.force_login(outsider)
    planted = SimpleUploadedFile("plant.txt", b"Planted text about falls and vitamin D.")
    response = _upload(client, library=str(library.code), documents=[planted])
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    # Naming the same "new" library makes the outsider's own, never the author's.
    again = SimpleUploadedFile("plant.txt", b"Planted text about falls and vitamin D.")
    assert _upload(client, new_library="Author notes", documents=[again]).status_code == 200
    assert Upload.objects.filter(library=library).count() == 1
    assert Library.objects.filter(name="Author notes", owner=outsider).exists()


def test_it_shares_a_library_with_a_user_or_a_team_read_or_write(
    private_upload, outsider, reviewer
):
    library, _ = private_upload
    assert not can_read_library(outsider, library)
    LibraryMember.objects.create(library=library, user=outsider)
    assert can_read_library(outsider, library) and not can_write_library(outsider, library)
    team = Group.objects.create(name="bone-team")
    reviewer.groups.add(team)
    LibraryMember.objects.create(library=library, team=team, access="write")
    assert can_write_library(reviewer, library)


def test_it_shares_a_plans_library_and_captures_with_its_members_only(
    private_upload, author, reviewer, outsider
):
    library, _ = private_upload
    plan = make_plan(author, members=(reviewer,))
    assert services.check_update_plan_library(author, plan, library)
    captures = do_get_web_capture_library(plan.code)
    for shared in (library, captures):
        assert can_read_library(reviewer, shared)  # as a member of the plan
        assert not can_read_library(outsider, shared)
    assert not can_write_library(author, captures)  # only the plan's runs write there
    assert plan_library_ids(plan) == (library.pk, captures.pk)


def test_it_lets_a_plan_search_only_libraries_its_owner_may_read(private_upload, author, outsider):
    library, _ = private_upload
    plan = make_plan(outsider)
    with pytest.raises(services.PlanInvalid, match="not been shared with you"):
        services.check_update_plan_library(outsider, plan, library)
    plan.library = library  # set behind the service's back (an old row, an admin edit)
    plan.save()
    assert not plan_may_search(plan, library)
    assert plan_library_ids(plan) == ()
    problems = services.start_blockers(plan, services.current_content(plan))
    assert any("may no longer read the library" in p for p in problems)


def test_it_keeps_imported_corpora_readable_by_everyone_signed_in(outsider, django_user_model):
    corpus = make_library("scifact")
    no_role = django_user_model.objects.create_user("norole", password="pw-norole")
    assert corpus.public and can_read_library(no_role, corpus)
    assert not can_write_library(outsider, corpus)


def test_it_retrieves_nothing_for_a_run_whose_plan_may_read_no_library(
    private_upload, author, outsider
):
    from research.stages.retrieve import library_retrieve

    library, source = private_upload
    query = "interim analysis drop in falls"
    own = make_plan(author)
    own.library = library
    own.save()
    found = library_retrieve(make_run(own))(query, 4)
    passages = Passage.objects.filter(pk__in=[int(item.passage_id) for item in found])
    assert set(passages.values_list("source_id", flat=True)) == {source.pk}  # findable
    stranger = make_run(make_plan(outsider))  # no library of its own, no web captures yet
    assert plan_library_ids(stranger.plan_version.plan) == ()
    assert library_retrieve(stranger)(query, 4) == []  # not "every library"
