from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluation', '0006_job_progress_done_total'),
    ]

    operations = [
        migrations.AlterField(
            model_name='runcall',
            name='role',
            field=models.CharField(choices=[('annotator', 'Annotator'), ('supervisor', 'Supervisor'), ('distilled', 'Distilled model')], max_length=12),
        ),
    ]
