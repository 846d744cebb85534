"""App config of the annotation side: datasets, items, annotations, campaigns, judgments."""

from __future__ import annotations

from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"

    def ready(self) -> None:
        # Each protocol's annotator hooks register themselves (annotator.protocols).
        from annotator.protocols import esa, mqm, opennlgauge  # noqa: F401
