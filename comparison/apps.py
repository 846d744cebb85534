"""App config of metric comparison jobs (beside analytics: it reads the layers below, nothing reads it)."""

from __future__ import annotations

from django.apps import AppConfig


class ComparisonConfig(AppConfig):
    name = "comparison"
    verbose_name = "Metric comparison"
