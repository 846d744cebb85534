"""Assignment.opened_at: the claim of an item's first open. Items already opened (active, started or with an
ESA row) count as claimed, so that no pre-fill runs a second time on them."""

from django.db import migrations, models
from django.db.models import Q
from django.db.models.functions import Coalesce, Now


def claim_opened(apps, schema_editor):
    Assignment = apps.get_model("annotator", "Assignment")
    Assignment.objects.filter(
        Q(last_active_at__isnull=False) | Q(started_at__isnull=False) | Q(esa__isnull=False) | ~Q(status="todo"),
        opened_at__isnull=True,
    ).update(opened_at=Coalesce("started_at", "last_active_at", Now()))


class Migration(migrations.Migration):

    dependencies = [
        ("annotator", "0017_campaign_planted_near_duplicates"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="opened_at",
            field=models.DateTimeField(blank=True, help_text="When its annotator first opened the item: set once, by the open that claims it (pre-fill then).", null=True),
        ),
        migrations.RunPython(claim_opened, migrations.RunPython.noop),
    ]
