"""Login throttling, Content-Security-Policy, password rules, proxy header, debug pages."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from ledger.models import Source, Verdict
from tests.factories import make_claim, make_library, make_plan, make_run
from tests.processes import BASE_DIR, child_env


def _login(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


@pytest.mark.django_db
def test_it_locks_out_a_username_after_repeated_wrong_passwords(author, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "author", "wrong").status_code == 200
    assert _login(client, "author", "wrong").status_code == 429
    locked = _login(client, "author", "pw-author")  # the right password, at once
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_it_lets_the_right_password_in_below_the_limit(author, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "author", "wrong")
    assert _login(client, "author", "pw-author").status_code == 302


@pytest.mark.django_db
def test_it_sends_a_strict_content_security_policy(client, author):
    client.force_login(author)
    policy = client.get(reverse("research-list-plans"))["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"  # no inline script, no eval
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    styled = client.get(reverse("research-create-plan"))  # a page with a <style> block
    nonce = styled["Content-Security-Policy"].split("'nonce-", 1)[1].split("'", 1)[0]
    assert f'<style nonce="{nonce}">' in styled.content.decode()


def _pages(author) -> list[str]:
    """Every page a signed-in researcher opens, on a plan with a run, a claim and a source."""
    plan = make_plan(author)
    run = make_run(plan)
    claim = make_claim(run, "Vitamin D reduced falls in older adults.", status=Verdict.UNCERTAIN)
    source = claim.evidence.get().snapshot.source
    source.libraries.add(make_library("imported"))
    return [
        reverse(name, args=args)
        for name, args in [
            ("research-list-plans", []),
            ("research-create-plan", []),
            ("research-show-plan", [plan.code]),
            ("research-diff-plan", [plan.code]),
            ("research-show-run", [run.code]),
            ("review-show-ledger", [run.code]),
            ("review-show-queue", [run.code]),
            ("review-show-audit", [run.code]),
            ("review-show-candidates", [run.code]),
            ("review-list-reports", [run.code]),
            ("review-show-claim", [claim.code]),
            ("ledger-list-sources", []),
            ("ledger-show-source", [source.code]),
            ("review-show-about", []),
        ]
    ]


_INLINE_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
_STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)


@pytest.mark.django_db
def test_it_serves_every_page_without_what_the_policy_blocks(client, author):
    """No inline script or handler, no style attribute, every <style> with the nonce."""
    client.force_login(author)
    for path in _pages(author):
        response = client.get(path, follow=True)
        assert response.status_code == 200, path
        html = response.content.decode()
        # django-csp adds a nonce only to a page that used one (one with a <style> block).
        policy = response["Content-Security-Policy"]
        nonce = policy.split("'nonce-", 1)[1].split("'", 1)[0] if "'nonce-" in policy else None
        for tag in html.split("<script")[1:]:
            assert "src=" in tag.split(">", 1)[0], (path, tag[:80])
        assert not _INLINE_HANDLER.search(html), (path, _INLINE_HANDLER.search(html))
        assert not _STYLE_ATTRIBUTE.search(html), (path, _STYLE_ATTRIBUTE.search(html))
        for tag in html.split("<style")[1:]:
            assert nonce and tag.startswith(f' nonce="{nonce}"'), (path, tag[:80])


def test_it_refuses_numeric_only_passwords():
    with pytest.raises(ValidationError, match="entirely numeric"):
        validate_password("804912375563")
    validate_password("a long passphrase 7")


@pytest.mark.django_db
def test_it_never_links_a_javascript_or_data_url_of_a_source(client, author):
    client.force_login(author)
    for url in ("javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,<b>x</b>"):
        source = Source.objects.create(canonical_id=f"url:{url}", url=url, title="Hostile")
        source.libraries.add(make_library("imported"))
        html = client.get(source.get_absolute_url()).content.decode()
        assert 'href="javascript' not in html.lower() and 'href="data:' not in html
        assert 'href=" javascript' not in html.lower()
        assert "not a web address" in html


def _settings_value(name: str, **env: str) -> str:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        f"print(repr(settings.{name}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        env=child_env(DJANGO_SETTINGS_MODULE="config.settings", **env),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_it_trusts_x_forwarded_proto_only_when_configured():
    assert _settings_value("SECURE_PROXY_SSL_HEADER") == "None"
    trusted = _settings_value("SECURE_PROXY_SSL_HEADER", DJANGO_TRUST_X_FORWARDED_PROTO="true")
    assert trusted == "('HTTP_X_FORWARDED_PROTO', 'https')"


def test_it_defaults_to_debug_off():
    env = {"DJANGO_DEBUG": "", "DJANGO_SECRET_KEY": "x" * 40}
    assert _settings_value("DEBUG", **env) == "False"


@pytest.mark.django_db
def test_it_shows_the_styled_404_not_the_debug_page_to_non_staff(client, author, settings):
    settings.DEBUG = True
    client.force_login(author)
    for path in ("/no/such/page/", "/plans/00000000-0000-0000-0000-000000000000/"):
        response = client.get(path)
        assert response.status_code == 404
        html = response.content.decode()
        assert "Not found" in html and "URLconf" not in html and "research-" not in html
        assert 'class="topbar"' in html  # the app's own layout


@pytest.mark.django_db
def test_it_keeps_the_debug_page_for_staff(client, admin_user, settings):
    settings.DEBUG = True
    client.force_login(admin_user)
    assert "URLconf" in client.get("/no/such/page/").content.decode()


@pytest.mark.django_db
def test_it_styles_403_pages(client, reviewer):
    client.force_login(reviewer)
    response = client.get(reverse("research-create-plan"))
    assert response.status_code == 403
    assert b"Not allowed" in response.content and b'class="topbar"' in response.content
