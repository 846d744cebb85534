import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """A DHP run's progress is the Job's `done` of `total` (its scores); the columns are renamed, the data kept."""

    dependencies = [
        ('dhp', '0003_simulated'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField(model_name='dhprun', old_name='done_steps', new_name='done'),
        migrations.RenameField(model_name='dhprun', old_name='total_steps', new_name='total'),
        migrations.AlterField(
            model_name='dhprun',
            name='done',
            field=models.PositiveIntegerField(default=0, help_text='Units of work done so far (the kind says which).'),
        ),
        migrations.AlterField(
            model_name='dhprun',
            name='total',
            field=models.PositiveIntegerField(default=0, help_text='Units of work in the whole job.'),
        ),
        migrations.AlterField(
            model_name='dhprun',
            name='created_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterModelOptions(name='dhprun', options={'ordering': ['-created_at'], 'verbose_name': 'DHP run'}),
    ]
