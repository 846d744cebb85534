"""The jobs app: no tables of its own, only the abstract Job model, its services, task base and partial."""

from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Job lifecycle"
