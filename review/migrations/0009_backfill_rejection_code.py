"""Fill ``Claim.rejection_code`` (ledger 0015) for claims rejected before it existed: the
reason code of each rejected claim's latest rejection (decisions are append-only, so the
latest one is the claim's state). Reversing leaves the field as it is (the ledger
migration's reversal drops it)."""

from django.db import migrations
from django.db.models import CharField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def backfill(apps, schema_editor):
    Claim = apps.get_model("ledger", "Claim")
    ReviewDecision = apps.get_model("review", "ReviewDecision")
    latest = (
        ReviewDecision.objects.filter(claim=OuterRef("pk"), action="reject")
        .order_by("-created_at", "-pk")
        .values("reason_code")[:1]
    )
    Claim.objects.filter(review_state="rejected").update(
        rejection_code=Coalesce(Subquery(latest), Value(""), output_field=CharField())
    )


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0015_claim_rejection_code"),
        ("review", "0008_move_reports_out"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
