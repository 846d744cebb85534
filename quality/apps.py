"""App config of a campaign's quality checks: decoys, planted outputs, qualification and vigilance."""

from __future__ import annotations

from django.apps import AppConfig


class QualityConfig(AppConfig):
    name = "quality"
    verbose_name = "Quality checks"

    def ready(self) -> None:
        from annotator import checks
        from quality.checks import QualityChecks

        checks.install(QualityChecks())
