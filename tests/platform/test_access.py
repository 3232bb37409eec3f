"""Every page needs a login; every model has an admin; static files work with DEBUG off."""

from __future__ import annotations

import uuid

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import URLPattern, URLResolver, get_resolver

from tests.processes import child_env, free_port, start_daphne, stop

PUBLIC = {"login", "healthz", "logout"}
OUR_APPS = {"research", "ledger", "review"}
# Django 5.2's admin cannot show models with a composite primary key; these two are
# derived BM25 index rows (terms and postings), inspected through SparseDocument.
NO_ADMIN = {"SparseTerm", "SparsePosting", "SparseBlock", "SparseDelta", "SparseGone"}


def _patterns(resolver: URLResolver, prefix: str = ""):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            if entry.namespace == "admin":
                continue
            yield from _patterns(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.name


def _concrete(route: str) -> str:
    for converter, value in (
        ("uuid", str(uuid.uuid4())),
        ("int", "1"),
        ("slug", "x"),
        ("str", "x"),
        ("path", "x"),
    ):
        while f"<{converter}:" in route:
            start = route.index(f"<{converter}:")
            route = route[:start] + value + route[route.index(">", start) + 1 :]
    return "/" + route.lstrip("^").rstrip("$")


@pytest.mark.django_db
def test_it_sends_anonymous_visitors_to_the_login_page_from_every_view(client):
    checked = 0
    for route, name in _patterns(get_resolver()):
        if name in PUBLIC:
            continue
        response = client.get(_concrete(route))
        assert response.status_code == 302, (route, response.status_code)
        assert response["Location"].startswith("/accounts/login/"), route
        checked += 1
    assert checked >= 3


def test_it_registers_every_model_of_our_apps_in_the_admin():
    missing = [
        model.__name__
        for model in apps.get_models()
        if model._meta.app_label in OUR_APPS
        and model not in admin.site._registry
        and model.__name__ not in NO_ADMIN
    ]
    assert missing == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_it_serves_static_files_with_debug_off():
    import subprocess
    import sys
    import urllib.request

    from tests.processes import BASE_DIR

    env = {
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "s" * 50,
        "DJANGO_SSL_REDIRECT": "false",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    }
    collected = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        env=child_env(**env),
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert collected.returncode == 0, collected.stderr
    port = free_port()
    server = start_daphne(port, **env)
    try:
        url = f"http://127.0.0.1:{port}/static/js/htmx.min.js"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
            assert b"htmx" in response.read(2000)
    finally:
        stop(server)
