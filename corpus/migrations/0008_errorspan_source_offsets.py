"""An MQM error marked in the source keeps its offsets in two fields instead of its note's words.

Rows imported before said "mqm:source START-END" in `note`; forward moves them into source_start/source_end and
drops the words (an "mqm:open" beside them stays), backward writes them back.
"""

import re

from django.db import migrations, models

_SOURCE = re.compile(r"\s*mqm:source (\d+)-(\d+)\s*")


def notes_to_fields(apps, schema_editor):
    span_model = apps.get_model("corpus", "ErrorSpan")
    changed = []
    for span in span_model.objects.filter(note__contains="mqm:source ").only("pk", "note").iterator():
        found = _SOURCE.search(span.note)
        if found is None:
            continue
        span.source_start, span.source_end = int(found.group(1)), int(found.group(2))
        span.note = (span.note[:found.start()] + " " + span.note[found.end():]).strip()
        changed.append(span)
    span_model.objects.bulk_update(changed, ["source_start", "source_end", "note"], batch_size=1000)


def fields_to_notes(apps, schema_editor):
    span_model = apps.get_model("corpus", "ErrorSpan")
    changed = []
    for span in span_model.objects.filter(source_start__isnull=False).only(
            "pk", "note", "source_start", "source_end").iterator():
        span.note = " ".join(w for w in (f"mqm:source {span.source_start}-{span.source_end}", span.note) if w)
        changed.append(span)
    span_model.objects.bulk_update(changed, ["note"], batch_size=1000)


class Migration(migrations.Migration):

    dependencies = [
        ('corpus', '0007_side_by_side_units'),
    ]

    operations = [
        migrations.AddField(
            model_name='errorspan',
            name='source_end',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='errorspan',
            name='source_start',
            field=models.PositiveIntegerField(blank=True, help_text="Offsets into the item's source, for an error marked there (an MQM omission); such a span has no offsets in the output.", null=True),
        ),
        migrations.RunPython(notes_to_fields, fields_to_notes),
        migrations.AddConstraint(
            model_name='errorspan',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('source_start__isnull', True), ('source_end__isnull', True)), models.Q(('source_start__isnull', False), ('source_end__isnull', False), ('source_start__lt', models.F('source_end')), ('start__isnull', True)), _connector='OR'), name='span_source_offsets_both_or_none_ordered_not_in_output'),
        ),
    ]
