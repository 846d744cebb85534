"""A DHP run's `phase` is its stage (perturbing, scoring, statistics): renamed so it is not read as an
assignment's phase. The API keeps the key `phase`."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("dhp", "0004_job_progress_done_total"),
    ]

    operations = [
        migrations.RenameField(model_name="dhprun", old_name="phase", new_name="stage"),
        migrations.AlterField(
            model_name="dhprun",
            name="stage",
            field=models.CharField(blank=True, default="", max_length=40,
                                   help_text="Where the run's work is: perturbing, scoring or statistics."),
        ),
    ]
