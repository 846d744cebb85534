# Placeholder for the migration of the same name on main (Campaign.protocol): it only holds this branch's place in
# the annotator migration line so that 0013 can name it. At the merge, main's file replaces this one.
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0011_assignment_phase_constraints'),
    ]

    operations = []
