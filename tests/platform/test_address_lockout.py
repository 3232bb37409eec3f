"""Login lock-out per address: many usernames from one address (config.lockout)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

ATTACKER = "203.0.113.7"
NEIGHBOUR = "198.51.100.9"


def _login(username: str, password: str, address: str):
    client = Client(REMOTE_ADDR=address)
    return client.post(reverse("login"), {"username": username, "password": password})


def test_it_locks_out_an_address_that_tries_many_usernames(author, settings):
    assert settings.LOGIN_ADDRESS_FAILURE_LIMIT == 20  # the default
    for n in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT - 1):
        assert _login(f"guess-{n}", "wrong", ATTACKER).status_code == 200
    assert _login("guess-last", "wrong", ATTACKER).status_code == 429  # the limit: locked
    locked = _login("author", "pw-author", ATTACKER)  # the right password, from there
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content
    assert _login("author", "pw-author", NEIGHBOUR).status_code == 302  # elsewhere: fine


def test_it_keeps_one_users_failures_elsewhere_from_locking_an_address(author, reviewer, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _login("reviewer", "wrong", NEIGHBOUR)
    assert _login("reviewer", "pw-reviewer", NEIGHBOUR).status_code == 429  # that pair
    assert _login("author", "pw-author", ATTACKER).status_code == 302
    assert _login("reviewer", "pw-reviewer", ATTACKER).status_code == 302


def test_it_lets_an_address_in_below_its_limit(author, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 3
    for n in range(2):
        _login(f"guess-{n}", "wrong", ATTACKER)
    assert _login("author", "pw-author", ATTACKER).status_code == 302
