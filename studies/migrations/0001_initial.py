"""The studies models, taken over from `annotator` with their tables (state only: no table is created)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


MODELS = ('studylink', 'participant', 'handout')


def _content_types_follow(apps, schema_editor):
    """Permissions and admin log entries keep pointing at the same models under their new app label."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="annotator", model__in=MODELS).update(app_label="studies")


def _content_types_return(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="studies", model__in=MODELS).update(app_label="annotator")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('annotator', '0010_study_and_quality_moved'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Handout',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('handed_at', models.DateTimeField()),
                        ('released_at', models.DateTimeField(blank=True, null=True)),
                        ('assignment', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='handout', to='annotator.assignment')),
                    ],
                    options={
                        'db_table': 'annotator_handout',
                    },
                ),
                migrations.CreateModel(
                    name='StudyLink',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('token', models.CharField(help_text='128 random bits, hex.', max_length=32, unique=True)),
                        ('enabled', models.BooleanField(default=True, help_text='Off: nobody new may join (a revoked link answers 410).')),
                        ('revoked_at', models.DateTimeField(blank=True, null=True)),
                        ('cap', models.PositiveIntegerField(blank=True, help_text='At most this many participants; empty: no cap.', null=True)),
                        ('expires', models.DateTimeField(blank=True, help_text='No new joins from this moment; empty: never.', null=True)),
                        ('consent', models.TextField(blank=True, default='', help_text='Markdown shown before the Start button.')),
                        ('items_per_participant', models.PositiveIntegerField(default=10)),
                        ('release_after_minutes', models.PositiveIntegerField(default=30)),
                        ('time_limit_minutes', models.PositiveIntegerField(blank=True, null=True)),
                        ('pass_code', models.CharField(max_length=64)),
                        ('fail_code', models.CharField(blank=True, default='', max_length=64)),
                        ('completion_url', models.CharField(blank=True, default='', max_length=2000)),
                        ('items', models.JSONField(default=list, help_text='The pool: item ids handed out to participants, in item order.')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('campaign', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='study_link', to='annotator.campaign')),
                    ],
                    options={
                        'db_table': 'annotator_studylink',
                    },
                ),
                migrations.CreateModel(
                    name='Participant',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('prolific_pid', models.CharField(blank=True, default='', max_length=64)),
                        ('study_id', models.CharField(blank=True, default='', max_length=64)),
                        ('session_id', models.CharField(blank=True, default='', max_length=64)),
                        ('worker_id', models.CharField(blank=True, default='', max_length=64)),
                        ('mturk_assignment_id', models.CharField(blank=True, default='', max_length=64)),
                        ('hit_id', models.CharField(blank=True, default='', max_length=64)),
                        ('joined_at', models.DateTimeField(auto_now_add=True)),
                        ('last_seen_at', models.DateTimeField(blank=True, help_text='Last request, to the minute.', null=True)),
                        ('deadline', models.DateTimeField(blank=True, help_text='joined_at + the time limit, if any.', null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('outcome', models.CharField(blank=True, default='', help_text='pass or fail, once the code is given.', max_length=4)),
                        ('code_given', models.CharField(blank=True, default='', max_length=64)),
                        ('flagged', models.BooleanField(default=False, help_text='Set by a researcher: the participant gets the fail code.')),
                        ('flag_note', models.CharField(blank=True, default='', max_length=500)),
                        ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='participant', to=settings.AUTH_USER_MODEL)),
                        ('link', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='participants', to='studies.studylink')),
                    ],
                    options={
                        'db_table': 'annotator_participant',
                        'ordering': ['link_id', 'joined_at', 'pk'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='studylink',
                    constraint=models.CheckConstraint(condition=models.Q(('items_per_participant__gte', 1)), name='studylink_items_positive'),
                ),
                migrations.AddConstraint(
                    model_name='studylink',
                    constraint=models.CheckConstraint(condition=models.Q(('release_after_minutes__gte', 1)), name='studylink_release_positive'),
                ),
                migrations.AddConstraint(
                    model_name='participant',
                    constraint=models.UniqueConstraint(condition=models.Q(('prolific_pid', ''), _negated=True), fields=('link', 'prolific_pid'), name='participant_one_per_prolific_pid'),
                ),
                migrations.AddConstraint(
                    model_name='participant',
                    constraint=models.UniqueConstraint(condition=models.Q(('worker_id', ''), _negated=True), fields=('link', 'worker_id'), name='participant_one_per_mturk_worker'),
                ),
            ],
        ),
        migrations.RunPython(_content_types_follow, _content_types_return),
    ]
