"""The Celery application; tasks live in the top-level tasks/ package (see CELERY_IMPORTS)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("spanjudge")
app.config_from_object("django.conf:settings", namespace="CELERY")
