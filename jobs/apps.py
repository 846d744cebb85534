"""The jobs app: the abstract Job model, its services, task base and partial, and the workers' beats."""

from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Job lifecycle"

    def ready(self) -> None:
        """Give every registered kind whose app wrote no admin of its own the lifecycle admin (cancel, resume),
        so a new kind needs no admin.py. The admin's own autodiscovery has run by now (it is installed first)."""
        from django.contrib import admin

        from jobs.admin import KindAdmin
        from jobs.kinds import job_kinds

        for kind in job_kinds():
            if not admin.site.is_registered(kind.model):
                admin.site.register(kind.model, KindAdmin)
