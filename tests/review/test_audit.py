from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.utils import IntegrityError
from django.urls import reverse

from review.models import AppendOnlyError, ReviewDecision
from review.services.decisions import do_approve_claim, do_reject_claim


@pytest.fixture
def decision(reviewer, flagged):
    return do_reject_claim(reviewer, flagged[2], 1, "overstated", "too strong")


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("boss", password="pw-boss")
    client.force_login(admin)
    return client


@pytest.mark.django_db
def test_it_lists_every_decision_with_actor_and_time(client, reviewer, run, flagged, decision):
    do_approve_claim(reviewer, flagged[0], 1, note="read the source: it states this")
    client.force_login(reviewer)
    html = client.get(reverse("review-show-audit", args=[run.code])).content.decode()
    assert html.count('class="decision decision-') == 2
    assert html.count('<td class="actor">reviewer</td>') == 2
    assert f'datetime="{decision.created_at.isoformat()}"' in html
    assert "Overstates what the sources say — too strong" in html


@pytest.mark.django_db
def test_it_refuses_to_change_or_delete_decisions_through_the_orm(decision):
    decision.reason = "rewritten"
    with pytest.raises(AppendOnlyError):
        decision.save()
    with pytest.raises(AppendOnlyError):
        decision.delete()
    with pytest.raises(AppendOnlyError):
        ReviewDecision.objects.filter(pk=decision.pk).update(reason="rewritten")
    with pytest.raises(AppendOnlyError):
        ReviewDecision.objects.filter(pk=decision.pk).delete()
    assert ReviewDecision.objects.get(pk=decision.pk).reason == "too strong"


@pytest.mark.django_db
def test_it_has_the_database_refuse_raw_update_and_delete(decision):
    table = ReviewDecision._meta.db_table
    for sql in (
        f"UPDATE {table} SET reason = 'rewritten' WHERE id = %s",
        f"DELETE FROM {table} WHERE id = %s",
    ):
        with (
            pytest.raises(IntegrityError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [decision.pk])
    assert ReviewDecision.objects.get(pk=decision.pk).reason == "too strong"


@pytest.mark.django_db
def test_it_lets_the_admin_read_but_not_rewrite_history(admin_client, decision):
    meta = ReviewDecision._meta
    change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[decision.pk])
    delete = reverse(f"admin:{meta.app_label}_{meta.model_name}_delete", args=[decision.pk])
    add = reverse(f"admin:{meta.app_label}_{meta.model_name}_add")
    changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")

    page = admin_client.get(change)
    assert page.status_code == 200  # a read-only view
    assert 'name="_save"' not in page.content.decode()
    assert (
        admin_client.post(change, {"reason": "rewritten", "action": "approve"}).status_code == 403
    )
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert admin_client.post(add, {"reason": "forged"}).status_code == 403
    bulk = admin_client.post(
        changelist, {"action": "delete_selected", "_selected_action": [decision.pk], "post": "yes"}
    )
    assert bulk.status_code in (200, 302, 403)
    assert ReviewDecision.objects.filter(pk=decision.pk, reason="too strong").exists()
    assert ReviewDecision.objects.count() == 1
