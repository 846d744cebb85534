from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0005_simulated"),
    ]

    operations = [
        migrations.AlterField(
            model_name="runcall",
            name="attempt",
            field=models.PositiveSmallIntegerField(
                default=0,
                help_text="0 first try, 1-9 warmer retry, 10+k try k with a longer budget, 100+n repair of call n.",
            ),
        ),
    ]
