"""Links made before pools had places get them: per output, the judges its registered annotators leave over, each
holding the participant assignment that holds it now (work that counts first), none in the control arm (those
links never gave participants one); and their control items, which participants get from now on."""

from django.db import migrations
from django.db.models import BooleanField, ExpressionWrapper, Q


def _places(apps, schema_editor):
    StudyLink = apps.get_model("studies", "StudyLink")
    PoolSlot = apps.get_model("studies", "PoolSlot")
    Participant = apps.get_model("studies", "Participant")
    Assignment = apps.get_model("annotator", "Assignment")
    for link in StudyLink.objects.select_related("campaign").iterator():
        campaign = link.campaign
        people = set(Participant.objects.filter(link=link).values_list("user_id", flat=True))
        work = Assignment.objects.filter(campaign=campaign, item_id__in=link.items, is_training=False, is_control=False)
        registered: dict[int, int] = {}
        for item_id in work.exclude(annotator_id__in=people).values_list("item_id", flat=True):
            registered[item_id] = registered.get(item_id, 0) + 1
        counts = ExpressionWrapper(Q(status="done") | Q(handout__isnull=True) | Q(handout__released_at__isnull=True),
                                   output_field=BooleanField())
        held: dict[int, list[int]] = {}
        for pk, item_id, _counted in (
            work.filter(annotator_id__in=people).annotate(counted=counts).order_by("-counted", "pk")
            .values_list("pk", "item_id", "counted")
        ) if people else ():
            held.setdefault(item_id, []).append(pk)
        slots = []
        for item_id in link.items:
            holders = held.get(item_id, [])
            for k in range(1, max(0, campaign.annotators_per_item - registered.get(item_id, 0)) + 1):
                slots.append(PoolSlot(link=link, item_id=item_id, judge=k, unprimed=False,
                                      assignment_id=holders[k - 1] if k <= len(holders) else None))
        PoolSlot.objects.bulk_create(slots)
        link.controls = sorted(set(Assignment.objects.filter(campaign=campaign, is_control=True)
                                   .values_list("item_id", flat=True)))
        link.save(update_fields=["controls"])


class Migration(migrations.Migration):

    dependencies = [
        ("studies", "0003_pool_slots_and_setup_report"),
    ]

    operations = [migrations.RunPython(_places, migrations.RunPython.noop)]
