"""App config of the analytics layer (the top: it reads every layer below and nothing reads it)."""

from __future__ import annotations

from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = "Analytics"
