"""App config of the annotation side: datasets, items, annotations, campaigns, judgments."""

from __future__ import annotations

import importlib
import pkgutil

from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"

    def ready(self) -> None:
        # Each protocol's annotator hooks register themselves: every module of annotator.protocols is imported,
        # so a new protocol's hooks need no line here.
        import annotator.protocols as package

        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
