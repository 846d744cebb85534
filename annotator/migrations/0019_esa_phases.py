"""ESA's spans done becomes a phase move: an item whose spans are done is in the scoring phase (or done), and
the moment is its assignment's boundary_at, undo's boundary for every protocol (the reveal's moment for a
revealed control-arm output). EsaScore.spans_done_at, the second state machine, goes. Reversible: backwards,
scoring items return to judging (training items to training) and spans_done_at is the boundary again."""

from django.db import migrations, models
from django.db.models import F, OuterRef, Subquery


def forwards(apps, schema_editor):
    Assignment = apps.get_model("annotator", "Assignment")
    EsaScore = apps.get_model("annotator", "EsaScore")
    Assignment.objects.filter(revealed_at__isnull=False).update(boundary_at=F("revealed_at"))
    done = EsaScore.objects.filter(assignment_id=OuterRef("pk"), spans_done_at__isnull=False)
    spans_done = Assignment.objects.filter(pk__in=done.values("assignment_id"))
    spans_done.update(boundary_at=Subquery(done.values("spans_done_at")[:1]))
    spans_done.filter(phase__in=["judging", "training"]).update(phase="scoring")


def backwards(apps, schema_editor):
    Assignment = apps.get_model("annotator", "Assignment")
    EsaScore = apps.get_model("annotator", "EsaScore")
    closed = Assignment.objects.filter(pk=OuterRef("assignment_id"), phase__in=["scoring", "done"],
                                       boundary_at__isnull=False)
    EsaScore.objects.filter(assignment__phase__in=["scoring", "done"]).update(
        spans_done_at=Subquery(closed.values("boundary_at")[:1]))
    Assignment.objects.filter(phase="scoring", is_training=True).update(phase="training")
    Assignment.objects.filter(phase="scoring").update(phase="judging")


class Migration(migrations.Migration):

    dependencies = [
        ("annotator", "0018_assignment_opened_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="boundary_at",
            field=models.DateTimeField(blank=True, help_text="When the last closing phase move happened (the reveal, spans done): undo never reaches before it.", null=True),
        ),
        migrations.AlterField(
            model_name="assignment",
            name="phase",
            field=models.CharField(choices=[("training", "Training"), ("marking", "Marking errors"), ("judging", "Judging"), ("scoring", "Scoring"), ("done", "Done")], default="judging", help_text="Where the annotator is in this item (annotator.engine.phases): training, marking, judging, scoring, done.", max_length=10),
        ),
        migrations.RemoveConstraint(
            model_name="assignment",
            name="assignment_training_item_in_training_or_done",
        ),
        migrations.AddConstraint(
            model_name="assignment",
            constraint=models.CheckConstraint(condition=models.Q(("is_training", False), ("phase__in", ["training", "scoring", "done"]), _connector="OR"), name="assignment_training_item_in_training_or_done"),
        ),
        migrations.RemoveConstraint(
            model_name="esascore",
            name="esascore_score_after_spans",
        ),
        migrations.RunPython(forwards, backwards),
        migrations.RemoveField(
            model_name="esascore",
            name="spans_done_at",
        ),
    ]
