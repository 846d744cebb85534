"""ExportJob, taken over from corpus with its table (state only: no table is created, every row is kept)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _content_types_follow(apps, schema_editor):
    """Permissions and admin log entries keep pointing at the same model under its new app label."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="corpus", model="exportjob").update(app_label="analytics")


def _content_types_return(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="analytics", model="exportjob").update(app_label="corpus")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('corpus', '0006_exportjob_moved_to_analytics'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='ExportJob',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('paused', 'Paused'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='pending', max_length=12)),
                        ('message', models.TextField(blank=True, default='', help_text='Why it failed or paused; what to do.')),
                        ('cancel_requested', models.BooleanField(default=False)),
                        ('celery_task_id', models.CharField(blank=True, default='', max_length=64)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('done', models.PositiveIntegerField(default=0, help_text='Units of work done so far (the kind says which).')),
                        ('total', models.PositiveIntegerField(default=0, help_text='Units of work in the whole job.')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('format', models.CharField(max_length=16)),
                        ('filters', models.JSONField(blank=True, default=dict, help_text="The export filter's non-empty fields.")),
                        ('files', models.JSONField(blank=True, default=list, help_text='File names written (in the export folder).')),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('dataset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='export_jobs', to='corpus.dataset')),
                    ],
                    options={
                        'db_table': 'corpus_exportjob',
                        'ordering': ['-created_at'],
                    },
                ),
            ],
        ),
        migrations.RunPython(_content_types_follow, _content_types_return),
    ]
