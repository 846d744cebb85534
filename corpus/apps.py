"""App config of the corpus layer."""

from __future__ import annotations

from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "corpus"
    verbose_name = "Corpus"
