from django.db import migrations, models


class Migration(migrations.Migration):
    """An export's `done` and `total` are the Job's (records written of items to export)."""

    dependencies = [
        ('corpus', '0004_source_kind_check'),
    ]

    operations = [
        migrations.AlterField(
            model_name='exportjob',
            name='done',
            field=models.PositiveIntegerField(default=0, help_text='Units of work done so far (the kind says which).'),
        ),
        migrations.AlterField(
            model_name='exportjob',
            name='total',
            field=models.PositiveIntegerField(default=0, help_text='Units of work in the whole job.'),
        ),
    ]
