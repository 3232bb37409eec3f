"""Who may do what, by group: the roles every app checks (no app above it is imported)."""

from __future__ import annotations

from django.contrib.auth.models import User

RESEARCHER_GROUP = "researcher"


def can_edit_plans(user: User) -> bool:
    """Researchers and staff may create, edit and start plans, and add documents."""
    return bool(
        user.is_staff or user.is_superuser or user.groups.filter(name=RESEARCHER_GROUP).exists()
    )
