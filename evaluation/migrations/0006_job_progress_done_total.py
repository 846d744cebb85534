from django.db import migrations, models


class Migration(migrations.Migration):
    """A run's progress is the Job's `done` of `total` (its calls); the columns are renamed, the data kept; an attempt's number says its kind."""

    dependencies = [
        ('evaluation', '0005_simulated'),
    ]

    operations = [
        migrations.RenameField(model_name='evaluatorrun', old_name='done_calls', new_name='done'),
        migrations.RenameField(model_name='evaluatorrun', old_name='total_calls', new_name='total'),
        migrations.AlterField(
            model_name='evaluatorrun',
            name='done',
            field=models.PositiveIntegerField(default=0, help_text='Units of work done so far (the kind says which).'),
        ),
        migrations.AlterField(
            model_name='evaluatorrun',
            name='total',
            field=models.PositiveIntegerField(default=0, help_text='Units of work in the whole job.'),
        ),
        migrations.AlterField(
            model_name='runcall',
            name='attempt',
            field=models.PositiveSmallIntegerField(
                default=0,
                help_text='0 first try, 1-9 warmer retry, 10+k try k with a longer budget, 100+n repair of call n.',
            ),
        ),
    ]
