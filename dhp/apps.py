"""Django app config of the DHP benchmark."""

from __future__ import annotations

from django.apps import AppConfig


class DhpConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "dhp"
    verbose_name = "DHP discernment benchmark"
