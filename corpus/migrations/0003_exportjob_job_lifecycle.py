# Export jobs share the one job lifecycle (jobs.models.Job): a cancel request, the task id, start and
# heartbeat times, and the six statuses. Exports left running before this migration get a heartbeat of now,
# so once it is stale the next worker takes them over (a running job with no heartbeat would never be).

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('corpus', '0002_i13_external_sources_exports'),
    ]

    operations = [
        migrations.AddField(
            model_name='exportjob',
            name='cancel_requested',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='exportjob',
            name='celery_task_id',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AddField(
            model_name='exportjob',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, null=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='exportjob',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='exportjob',
            name='message',
            field=models.TextField(blank=True, default='', help_text='Why it failed or paused; what to do.'),
        ),
        migrations.AlterField(
            model_name='exportjob',
            name='status',
            field=models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('paused', 'Paused'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='pending', max_length=12),
        ),
    ]
