from django.db import migrations, models


def sum_progress(apps, schema_editor):
    """Fill `done` and `total` of existing jobs with the sums of their per-metric progress."""
    ComparisonJob = apps.get_model('comparison', 'ComparisonJob')
    for job in ComparisonJob.objects.all().only('pk', 'progress'):
        entries = [e for e in (job.progress or {}).values() if isinstance(e, dict)]
        ComparisonJob.objects.filter(pk=job.pk).update(
            done=sum(int(e.get('done', 0)) for e in entries), total=sum(int(e.get('total', 0)) for e in entries)
        )


class Migration(migrations.Migration):
    """A comparison's progress is also the Job's `done` of `total`: the sums over its metrics."""

    dependencies = [
        ('comparison', '0002_simulated'),
    ]

    operations = [
        migrations.AddField(
            model_name='comparisonjob',
            name='done',
            field=models.PositiveIntegerField(default=0, help_text='Units of work done so far (the kind says which).'),
        ),
        migrations.AddField(
            model_name='comparisonjob',
            name='total',
            field=models.PositiveIntegerField(default=0, help_text='Units of work in the whole job.'),
        ),
        migrations.AlterField(
            model_name='comparisonjob',
            name='progress',
            field=models.JSONField(blank=True, default=dict,
                                   help_text='metric -> {done, total}; `done` and `total` are their sums.'),
        ),
        migrations.RunPython(sum_progress, migrations.RunPython.noop),
    ]
