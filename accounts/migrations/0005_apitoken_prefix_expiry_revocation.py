from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0004_i15_import_identity'),
    ]

    operations = [
        migrations.AddField(
            model_name='apitoken',
            name='prefix',
            field=models.CharField(blank=True, default='', help_text="The token's first characters, to tell tokens apart ('' for older tokens).", max_length=8),
        ),
        migrations.AddField(
            model_name='apitoken',
            name='expires_at',
            field=models.DateTimeField(blank=True, help_text='Refused after this moment; empty: never.', null=True),
        ),
        migrations.AddField(
            model_name='apitoken',
            name='revoked_at',
            field=models.DateTimeField(blank=True, help_text='Refused since this moment.', null=True),
        ),
    ]
