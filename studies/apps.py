"""App config of studies recruited by link: the link, its participants, joining and screening."""

from __future__ import annotations

from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "studies"
    verbose_name = "Studies"
