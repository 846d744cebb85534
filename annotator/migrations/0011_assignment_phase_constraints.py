"""An assignment's phase and the fields that follow from it are kept consistent by the database; rows written
before are brought in line first (the phase wins where it is more specific, the status where it says done)."""

from django.conf import settings
from django.db import migrations, models


def _agree(apps, schema_editor):
    Assignment = apps.get_model("annotator", "Assignment")
    Assignment.objects.filter(status="done").exclude(phase="done").update(phase="done")
    Assignment.objects.filter(phase="done").exclude(status="done").update(status="done")
    Assignment.objects.filter(is_training=True).exclude(phase__in=["training", "done"]).update(phase="training")
    Assignment.objects.filter(phase="training", is_training=False).update(phase="judging")
    Assignment.objects.filter(in_control_arm=False).exclude(revealed_at=None).update(revealed_at=None)
    Assignment.objects.filter(phase="marking", in_control_arm=False).update(phase="judging")
    Assignment.objects.filter(phase="marking").exclude(revealed_at=None).update(phase="judging")


class Migration(migrations.Migration):
    atomic = False  # the data step commits before the constraints are added

    dependencies = [
        ('annotator', '0010_study_and_quality_moved'),
        ('corpus', '0005_exportjob_job_progress'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(_agree, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'done'), ('phase', 'done')), models.Q(models.Q(('status', 'done'), _negated=True), models.Q(('phase', 'done'), _negated=True)), _connector='OR'), name='assignment_done_status_is_done_phase'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('phase', 'training'), _negated=True), ('is_training', True), _connector='OR'), name='assignment_training_phase_is_training_item'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.CheckConstraint(condition=models.Q(('is_training', False), ('phase__in', ['training', 'done']), _connector='OR'), name='assignment_training_item_in_training_or_done'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('phase', 'marking'), _negated=True), models.Q(('in_control_arm', True), ('revealed_at__isnull', True)), _connector='OR'), name='assignment_marking_is_unrevealed_control_arm'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.CheckConstraint(condition=models.Q(('revealed_at__isnull', True), ('in_control_arm', True), _connector='OR'), name='assignment_revealed_only_in_control_arm'),
        ),
    ]
