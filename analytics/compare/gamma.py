"""Gamma on request, computed by a worker: the API answers 202 until the result is in the results cache.

pygamma-agreement takes minutes of CPU on a small study (118 s on the 18-item demo), so a request never
computes it: the first request queues one task per question, later ones answer 202 with the state, and the
worker's result is served from the cache. The result's key holds the dataset's data version, so a new
annotation or judgment asks afresh rather than serving a stale figure.

A GET with a read-only token reaches this, so the work it can queue is bounded: the question is checked
(unknown aspect or source: 422) and written canonically (sources sorted, duplicates dropped), at most one
task per (dataset, question) is queued or running (a marker without the data version), and each user holds
at most GAMMA_MAX_PENDING_PER_USER of them (a slot each; one more is a 429 with Retry-After). The results
cache is shared by the web and the workers (settings.RESULTS_CACHE).
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
from corpus.models import Annotation, Dataset, ErrorSpan
from errors import TooMany

GAMMA_TASK = "tasks.analytics.compute_gamma"
PENDING_SECONDS = 3600  # a worker that died mid-way: the next request after this queues the task again
RESULT_SECONDS = 7 * 24 * 3600
RETRY_AFTER_SECONDS = 5
BUSY_RETRY_SECONDS = 60  # a user at the cap waits for one of their tasks; these take minutes


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


def canonical(question: GammaQuestion) -> GammaQuestion:
    """The question written one way: sources sorted without duplicates, names and aspect stripped (the rows
    do not depend on the order the sources were asked in)."""
    return GammaQuestion(dataset_id=question.dataset_id, reference=question.reference.strip(),
                         sources=tuple(sorted({s.strip() for s in question.sources if s.strip()})),
                         by_category=bool(question.by_category), aspect=question.aspect.strip())


def dataset_aspects(dataset: Dataset) -> list[str]:
    """The aspects a comparison of the dataset can be restricted to: its annotations' and its human scores'."""
    named = set(Annotation.objects.filter(item__dataset=dataset).exclude(aspect="")
                .values_list("aspect", flat=True).distinct())
    return sorted(named | set(dataset.score_aspects or []))


def check_aspect(dataset: Dataset, aspect: str) -> str:
    """Return `aspect` when the dataset has it ('' means every aspect), else refuse it (422) naming the field."""
    known = dataset_aspects(dataset)
    if aspect and aspect not in known:
        raise UnknownSource(f"aspect: {aspect[:80]!r} is not an aspect of dataset {dataset.name!r} "
                            f"(aspects: {', '.join(known) or 'none'})", field="aspect")
    return aspect


def question_key(question: GammaQuestion, version: str) -> str:
    text = json.dumps({**asdict(canonical(question)), "version": version}, sort_keys=True)
    return "gamma:" + hashlib.sha256(text.encode()).hexdigest()


def pending_key(question: GammaQuestion) -> str:
    """The marker of a queued or running task for this question, whatever the data version: one at a time."""
    text = json.dumps(asdict(canonical(question)), sort_keys=True)
    return "gamma-pending:" + hashlib.sha256(text.encode()).hexdigest()


def _slot_keys(user_id: int) -> list[str]:
    return [f"gamma-user:{user_id}:{n}" for n in range(settings.GAMMA_MAX_PENDING_PER_USER)]


def _claim_slot(user_id: int, marker: str) -> str | None:
    """Take one of the user's slots for the task `marker` stands for; None when all are held by tasks still
    queued or running (a slot whose task's marker is gone is free again: the worker died or the cache lost it)."""
    cache = _cache()
    for slot in _slot_keys(user_id):
        if cache.add(slot, marker, PENDING_SECONDS):
            return slot
        held = cache.get(slot)
        if held is None or cache.get(held) is None:
            cache.delete(slot)
            if cache.add(slot, marker, PENDING_SECONDS):
                return slot
    return None


def gamma_answer(question: GammaQuestion, *, user_id: int) -> GammaAnswer:
    """The cached result for `question`, or "pending" after making sure exactly one task computes it.

    The caller has checked the names (sources_compare without gamma) and the aspect (check_aspect). A user
    whose slots are all held by queued or running tasks gets TooMany (429) rather than another task."""
    question = canonical(question)
    key = question_key(question, data_version(question.dataset_id))
    cache = _cache()
    cached = cache.get(key)
    if cached is not None:
        return GammaAnswer(state=cached["state"], rows=cached.get("rows"), detail=cached.get("detail", ""))
    pending = GammaAnswer(state="pending", detail=f"gamma is being computed by a worker; ask again in "
                                                  f"{RETRY_AFTER_SECONDS} s or more (the same URL)")
    marker = pending_key(question)
    if cache.get(marker) is not None:
        return pending
    slot = _claim_slot(user_id, marker)
    if slot is None:
        raise TooMany(f"you already have {settings.GAMMA_MAX_PENDING_PER_USER} gamma computations queued or "
                      "running (GAMMA_MAX_PENDING_PER_USER); ask again when one has finished",
                      retry_after=BUSY_RETRY_SECONDS)
    if cache.add(marker, slot, PENDING_SECONDS):
        transaction.on_commit(partial(current_app.send_task, GAMMA_TASK, args=[asdict(question), key]))
    else:  # another request queued the same question a moment ago
        cache.delete(slot)
    return pending


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
        marker = pending_key(asked)
        slot = _cache().get(marker)
        _cache().delete(marker)
        if slot:
            _cache().delete(slot)
