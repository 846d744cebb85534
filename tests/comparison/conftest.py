"""Fixtures of the comparison tests: the made-up meta_eval samples imported as they are."""

from __future__ import annotations

import pytest

from corpus.models import Dataset
from corpus.services.importing import items_import
from tests.conftest import SAMPLE_DATA


@pytest.fixture
def dialogue(db) -> Dataset:
    """6 responses by 3 systems to 2 contexts, with 4 human-score aspects on 1-3 / 0-1 scales."""
    items_import(path=SAMPLE_DATA / "meta_eval" / "dialogue.json", dataset_name="dlg <i>x</i>", task_slug="dialogue")
    return Dataset.objects.get(name="dlg <i>x</i>")


@pytest.fixture
def summaries(db) -> Dataset:
    items_import(path=SAMPLE_DATA / "meta_eval" / "summarization.json", dataset_name="sums",
                 task_slug="summarization")
    return Dataset.objects.get(name="sums")
