"""The study (links, participants, handouts) and quality-check (decoys, planted outputs, qualification) models
leave this app for `studies` and `quality`. Their tables stay where they are, rows and all: this changes only
Django's state; the new apps' first migrations take the same tables over."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("annotator", "0009_quality_checks"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(
                    model_name='checkspan',
                    name='campaign',
                ),
                migrations.RemoveField(
                    model_name='checkspan',
                    name='campaign_run',
                ),
                migrations.RemoveField(
                    model_name='checkspan',
                    name='original',
                ),
                migrations.RemoveField(
                    model_name='checkspan',
                    name='span',
                ),
                migrations.RemoveField(
                    model_name='handout',
                    name='assignment',
                ),
                migrations.RemoveField(
                    model_name='participant',
                    name='link',
                ),
                migrations.RemoveField(
                    model_name='participant',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='plantedoutput',
                    name='annotator',
                ),
                migrations.RemoveField(
                    model_name='plantedoutput',
                    name='campaign',
                ),
                migrations.RemoveField(
                    model_name='plantedoutput',
                    name='item',
                ),
                migrations.RemoveField(
                    model_name='plantedoutput',
                    name='original',
                ),
                migrations.RemoveField(
                    model_name='qualification',
                    name='annotator',
                ),
                migrations.RemoveField(
                    model_name='qualification',
                    name='campaign',
                ),
                migrations.RemoveField(
                    model_name='studylink',
                    name='campaign',
                ),
                migrations.DeleteModel(
                    name='CheckSource',
                ),
                migrations.DeleteModel(
                    name='CheckSpan',
                ),
                migrations.DeleteModel(
                    name='Handout',
                ),
                migrations.DeleteModel(
                    name='Participant',
                ),
                migrations.DeleteModel(
                    name='PlantedOutput',
                ),
                migrations.DeleteModel(
                    name='Qualification',
                ),
                migrations.DeleteModel(
                    name='StudyLink',
                ),
            ],
        ),
    ]
