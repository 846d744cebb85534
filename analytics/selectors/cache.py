"""Dashboard numbers cached until the data under them changes (a CSV download must not recompute 2 s of work)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.db.models import Count, Max, Q

from annotator.models import Assignment, Campaign, SpanJudgment, WorkAction
from corpus.models import Annotation, ErrorSpan
from quality.selectors.vigilance import excluded_annotator_ids

CACHE_SECONDS = 600
T = TypeVar("T")


def data_version(dataset_id: int) -> str:
    """A fingerprint of everything a dashboard of this dataset reads: judgments, spans, annotations, which
    items are finished, and every expert action (added errors edited in place, undo and redo).

    Judgments are edited in place, so their latest `updated_at` and count stand for them; spans and
    annotations are only added or deleted, so count and highest id do; finishing or reopening an item changes
    the count of finished assignments or their latest `finished_at`; an action is added or undone.
    """
    judgments = SpanJudgment.objects.filter(span__annotation__item__dataset_id=dataset_id).aggregate(
        n=Count("id"), last=Max("updated_at")
    )
    spans = ErrorSpan.objects.filter(annotation__item__dataset_id=dataset_id).aggregate(n=Count("id"), top=Max("id"))
    annotations = Annotation.objects.filter(item__dataset_id=dataset_id).aggregate(n=Count("id"), top=Max("id"))
    assignments = Assignment.objects.filter(item__dataset_id=dataset_id).aggregate(
        done=Count("id", filter=Q(status=Assignment.Status.DONE)), last=Max("finished_at"), n=Count("id"),
    )
    actions = WorkAction.objects.filter(assignment__item__dataset_id=dataset_id).aggregate(
        top=Max("id"), undone=Count("id", filter=Q(undone=True)), last=Max("undone_at")
    )
    return f"{judgments}|{spans}|{annotations}|{assignments}|{actions}"


def dashboard_key(scope, *, reference: str, n_resamples: int, seed: int) -> str | None:
    """The cache key of a dashboard's numbers in the current state of its data (None: no such dataset)."""
    dataset_id = scope.dataset_id
    if dataset_id is None:
        dataset_id = Campaign.objects.filter(pk=scope.campaign_id).values_list("dataset_id", flat=True).first()
    if dataset_id is None:
        return None
    # whom the figures leave out: a changed setting or threshold changes it while the data stands still
    excluded = excluded_annotator_ids(scope.campaign_id, exclude_flagged=scope.exclude_flagged)
    raw = f"{scope}|{sorted(excluded)}|{reference}|{n_resamples}|{seed}|{data_version(dataset_id)}"
    # the version tag changes when DashboardData gains a field, so no older pickled value is read back
    return "dashboard:v3:" + hashlib.sha256(raw.encode()).hexdigest()


def cached(key: str | None, compute: Callable[[], T]) -> T:
    """Return the cached value under `key`, computing and storing it on a miss (no caching without a key)."""
    if key is None:
        return compute()
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, CACHE_SECONDS)
    return value


def cached_dashboard_data(scope, *, reference: str, n_resamples: int, seed: int):
    """Return `dashboard_data(...)`, reusing the last result while the dataset's data is unchanged."""
    from analytics.selectors import dashboard_data

    key = dashboard_key(scope, reference=reference, n_resamples=n_resamples, seed=seed)
    return cached(key, lambda: dashboard_data(scope, reference=reference, n_resamples=n_resamples, seed=seed))
