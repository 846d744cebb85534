"""Gamma on request, computed by a worker: the API answers 202 until the result is in the results cache.

pygamma-agreement takes minutes of CPU on a small study (118 s on the 18-item demo), so a request never
computes it: the first request queues one task per question (a marker in the cache keeps a second request
from queueing it again), later ones answer 202 with the state, and the worker's result is served from the
cache. The key holds the dataset's data version, so a new annotation or judgment asks afresh rather than
serving a stale figure. The results cache is shared by the web and the workers (settings.RESULTS_CACHE).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import caches
from django.db import transaction
from django.db.models import Count, Max

from analytics.compare.sources import UnknownSource, sources_compare
from annotator.models import SpanJudgment
from corpus.models import Dataset, ErrorSpan

GAMMA_TASK = "tasks.analytics.compute_gamma"
PENDING_SECONDS = 3600  # a worker that died mid-way: the next request after this queues the task again
RESULT_SECONDS = 7 * 24 * 3600
RETRY_AFTER_SECONDS = 5


@dataclass(frozen=True)
class GammaQuestion:
    dataset_id: int
    reference: str
    sources: tuple[str, ...]
    by_category: bool
    aspect: str


@dataclass(frozen=True)
class GammaAnswer:
    state: str  # "done", "pending" or "failed"
    rows: list[dict[str, Any]] | None = None
    detail: str = ""


def _cache():
    return caches[settings.RESULTS_CACHE]


def data_version(dataset_id: int) -> str:
    """What the comparison reads, summarized: spans and judgments (count and latest change) of the dataset."""
    spans = ErrorSpan.objects.filter(annotation__item__dataset_id=dataset_id).aggregate(n=Count("pk"), top=Max("pk"))
    judged = SpanJudgment.objects.filter(assignment__item__dataset_id=dataset_id).aggregate(
        n=Count("pk"), last=Max("updated_at"))
    return f"{spans['n']}:{spans['top']}:{judged['n']}:{judged['last']}"


def question_key(question: GammaQuestion, version: str) -> str:
    text = json.dumps({**asdict(question), "version": version}, sort_keys=True)
    return "gamma:" + hashlib.sha256(text.encode()).hexdigest()


def gamma_answer(question: GammaQuestion) -> GammaAnswer:
    """The cached result for `question`, or "pending" after making sure exactly one task computes it."""
    key = question_key(question, data_version(question.dataset_id))
    cached = _cache().get(key)
    if cached is not None:
        return GammaAnswer(state=cached["state"], rows=cached.get("rows"), detail=cached.get("detail", ""))
    if _cache().add(f"{key}:pending", True, PENDING_SECONDS):
        transaction.on_commit(partial(current_app.send_task, GAMMA_TASK, args=[asdict(question), key]))
    return GammaAnswer(state="pending", detail=f"gamma is being computed by a worker; ask again in "
                                                f"{RETRY_AFTER_SECONDS} s or more (the same URL)")


def gamma_compute(question: dict[str, Any], key: str) -> str:
    """The worker's side: compute the rows with gamma and cache them (or why they failed) under `key`."""
    asked = GammaQuestion(**{**question, "sources": tuple(question["sources"])})
    dataset = Dataset.objects.filter(pk=asked.dataset_id).first()
    try:
        if dataset is None:
            raise UnknownSource(f"dataset {asked.dataset_id} no longer exists")
        rows = sources_compare(dataset, reference=asked.reference, sources=list(asked.sources),
                               by_category=asked.by_category, gamma=True, aspect=asked.aspect)
        _cache().set(key, {"state": "done", "rows": rows}, RESULT_SECONDS)
        return "done"
    except UnknownSource as exc:
        _cache().set(key, {"state": "failed", "detail": str(exc)}, RESULT_SECONDS)
        return "failed"
    finally:
        _cache().delete(f"{key}:pending")
