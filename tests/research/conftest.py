from __future__ import annotations

import pytest

from ledger.models import Library
from tests.factories import make_passage, make_snapshot

VITAMIN_D = "Does vitamin D supplementation reduce the risk of fractures in older adults?"


@pytest.fixture
def library() -> Library:
    """A small library with one passage: enough for a run to be allowed to start."""
    lib = Library.objects.create(name="fixture-lib", public=True)  # an imported corpus
    snapshot = make_snapshot(
        "Vitamin D supplementation reduced hip fractures in older adults in a large trial.",
        title="Vitamin D trial",
    )
    snapshot.source.libraries.add(lib)
    make_passage(snapshot)
    return lib


def htmx(client, url: str, data: dict[str, object] | None = None, method: str = "post"):
    call = getattr(client, method)
    return call(url, data or {}, HTTP_HX_REQUEST="true")
