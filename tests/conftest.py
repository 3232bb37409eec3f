"""Shared fixtures: the embedded Postgres and a fixed cast of users."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The throwaway test database lets a superuser TRUNCATE the audit trail.

    Django empties the database between transactional tests with TRUNCATE, which the
    append-only trigger refuses unless the session sets ``evidence.allow_truncate``
    (review migration 0003). Set as the database's default, every connection of the
    test session — this process's and its daphne / worker children's — has it.
    """
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        name = connection.settings_dict["NAME"]
        cursor.execute(f"ALTER DATABASE \"{name}\" SET evidence.allow_truncate = 'on'")
        cursor.execute("SET evidence.allow_truncate = 'on'")


def _user(django_user_model, username: str, *groups: str):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(username=username, password="pw-" + username)
    # get_or_create: a transactional test's flush removes the groups the migration made.
    user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in groups))
    return user


@pytest.fixture
def author(django_user_model):
    """A researcher who owns plans."""
    return _user(django_user_model, "author", "researcher")


@pytest.fixture
def reviewer(django_user_model):
    """A reviewer who may decide on claims of plans they are a member of."""
    return _user(django_user_model, "reviewer", "reviewer")


@pytest.fixture
def researcher(django_user_model):
    """A read-only member: sees plans they belong to but cannot decide."""
    return _user(django_user_model, "researcher2", "researcher")


@pytest.fixture
def outsider(django_user_model):
    """Logged in, but a member of nothing: gets 404 everywhere."""
    return _user(django_user_model, "outsider", "researcher", "reviewer")
