"""ExportJob moved to analytics beside its kind; its table stays (state only: no row is touched)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('corpus', '0005_exportjob_job_progress'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name='ExportJob')],
        ),
    ]
