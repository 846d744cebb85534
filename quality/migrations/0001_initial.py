"""The quality models, taken over from `annotator` with their tables (state only: no table is created)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


MODELS = ('checksource', 'checkspan', 'plantedoutput', 'qualification')


def _content_types_follow(apps, schema_editor):
    """Permissions and admin log entries keep pointing at the same models under their new app label."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="annotator", model__in=MODELS).update(app_label="quality")


def _content_types_return(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="quality", model__in=MODELS).update(app_label="annotator")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('annotator', '0010_study_and_quality_moved'),
        ('corpus', '0005_exportjob_job_progress'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='CheckSource',
                    fields=[
                        ('source', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, parent_link=True, primary_key=True, related_name='checks_of', serialize=False, to='corpus.source')),
                        ('campaign', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='check_source', to='annotator.campaign')),
                    ],
                    options={
                        'db_table': 'annotator_checksource',
                    },
                    bases=('corpus.source',),
                ),
                migrations.CreateModel(
                    name='CheckSpan',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('decoy', 'Decoy'), ('copy', 'Machine span on a planted output')], max_length=8)),
                        ('key_span_verdict', models.CharField(blank=True, choices=[('error', 'Error'), ('not_error', 'Not an error'), ('no_span', 'No span given'), ('hallucination', 'Hallucination')], default='', max_length=16)),
                        ('key_explanation_verdict', models.CharField(blank=True, choices=[('correct', 'Correct'), ('partially_correct', 'Partially correct'), ('incomplete', 'Incomplete'), ('vague', 'Vague'), ('incorrect', 'Incorrect'), ('not_error', 'Not an error')], default='', max_length=20)),
                        ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='check_spans', to='annotator.campaign')),
                        ('campaign_run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotator.campaignrun')),
                        ('original', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='corpus.errorspan')),
                        ('span', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='check_span', to='corpus.errorspan')),
                    ],
                    options={
                        'db_table': 'annotator_checkspan',
                        'ordering': ['campaign_id', 'span_id'],
                    },
                ),
                migrations.CreateModel(
                    name='PlantedOutput',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(max_length=16)),
                        ('start', models.PositiveIntegerField()),
                        ('end', models.PositiveIntegerField()),
                        ('before', models.TextField()),
                        ('after', models.TextField()),
                        ('annotator', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='planted_outputs', to='annotator.campaign')),
                        ('item', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='planted', to='corpus.item')),
                        ('original', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='corpus.item')),
                    ],
                    options={
                        'db_table': 'annotator_plantedoutput',
                        'ordering': ['campaign_id', 'annotator_id', 'pk'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('start__lt', models.F('end'))), name='planted_start_before_end')],
                    },
                ),
                migrations.CreateModel(
                    name='Qualification',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('score', models.FloatField(blank=True, null=True)),
                        ('passed', models.BooleanField(blank=True, help_text='None until every training item is finished.', null=True)),
                        ('attempts', models.PositiveSmallIntegerField(default=1)),
                        ('decided_at', models.DateTimeField(blank=True, null=True)),
                        ('annotator', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='qualifications', to='annotator.campaign')),
                    ],
                    options={
                        'db_table': 'annotator_qualification',
                        'constraints': [models.UniqueConstraint(fields=('campaign', 'annotator'), name='qualification_one_per_annotator')],
                    },
                ),
            ],
        ),
        migrations.RunPython(_content_types_follow, _content_types_return),
    ]
