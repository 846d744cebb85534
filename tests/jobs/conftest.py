"""Every kind of job, each as a pending row made without a server: what the lifecycle tests run over."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from analytics.models import ExportJob
from annotator.models import Campaign
from comparison.models import ComparisonJob
from corpus.models import Dataset
from dhp.models import DhpRun
from evaluation.models import EvaluatorRun
from jobs.models import Job, JobStatus
from quality.models import DecoyExplanationJob, PlantedWritingJob
from tests import factories


@dataclass(frozen=True)
class Kind:
    model: type[Job]
    make: Callable[[Dataset], Job]

    def __str__(self) -> str:
        return self.model.__name__


_NUMBERS = itertools.count(1)
KINDS = [
    Kind(EvaluatorRun, lambda ds: factories.run(ds, "lifecycle", status=JobStatus.PENDING)),
    Kind(DhpRun,
         lambda ds: DhpRun.objects.create(dataset=ds, evaluator="m:1b", metrics=["accuracy"], kinds=["typo:minor"])),
    Kind(ComparisonJob, lambda ds: ComparisonJob.objects.create(dataset=ds, metrics=["length"], aspects=["accuracy"])),
    Kind(ExportJob, lambda ds: ExportJob.objects.create(dataset=ds, format="jsonl")),
    Kind(DecoyExplanationJob, lambda ds: DecoyExplanationJob.objects.create(campaign=factories.campaign(
        f"decoy draft {next(_NUMBERS)}", ds, [], [], status=Campaign.Status.DRAFT))),
    Kind(PlantedWritingJob, lambda ds: PlantedWritingJob.objects.create(campaign=factories.campaign(
        f"planted draft {next(_NUMBERS)}", ds, [], [], status=Campaign.Status.DRAFT), server="http://127.0.0.1:9",
        model="m:1b")),
]


@pytest.fixture(params=KINDS, ids=str)
def kind(request) -> Kind:
    return request.param


@pytest.fixture
def dataset(db) -> Dataset:
    return factories.dataset("jobs", items=[{"external_id": "a", "output": "One text."},
                                                {"external_id": "b", "output": "Two texts."}])


def task_of(kind: Kind):
    """The kind's Celery task object (tasks/ sits above every layer; only the tests and Celery import it)."""
    from tasks.jobs import TASKS

    return TASKS[kind.model]
