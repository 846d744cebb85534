"""App config of the analytics layer (the top: it reads every layer below and nothing reads it)."""

from __future__ import annotations

import importlib
import pkgutil

from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = "Analytics"

    def ready(self) -> None:
        # A protocol's figures and formats register themselves: every module of analytics.protocols is imported.
        import analytics.protocols as package

        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
