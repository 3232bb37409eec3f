"""Create the first administrator when there is none, printing a generated password once."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Create a first superuser with a random password if no superuser exists."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        if user_model.objects.filter(is_superuser=True).exists():
            self.stdout.write("An administrator already exists; no password printed.")
            return
        password = secrets.token_urlsafe(18)
        user = user_model.objects.create_superuser(
            username=options["username"], email="", password=password
        )
        user.groups.add(*Group.objects.filter(name__in=["researcher", "reviewer"]))
        self.stdout.write(
            self.style.WARNING(
                f"Created administrator '{user.username}' with password: {password}\n"
                "This password is shown once. Change it after logging in."
            )
        )
