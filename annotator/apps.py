"""App config of the annotation side: datasets, items, annotations, campaigns, judgments."""

from __future__ import annotations

from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"
