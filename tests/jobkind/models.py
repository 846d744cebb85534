"""The fixture kind's model: a job that counts to its total (no task name: it gets the kind's own)."""

from __future__ import annotations

from django.db import models

from jobs.models import Job


class Tally(Job):
    label = models.CharField(max_length=40, default="")
