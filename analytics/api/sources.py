"""Comparing a dataset's sources (runs, imported files, campaign humans) with one another."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from ninja import Router, Schema
from ninja.pagination import paginate

from accounts.access import require_researcher
from analytics.compare.gamma import RETRY_AFTER_SECONDS, GammaQuestion, check_aspect, gamma_answer
from analytics.compare.sources import available_sources, comparison_csv, sources_compare
from corpus.models import Dataset
from errors import UserError

# Beside the datasets (/api/datasets/ID/compare), with the export jobs under one tag.
router = Router(tags=["sources and exports"])


class SourceOut(Schema):
    name: str
    kind: str

@router.get("/datasets/{dataset_id}/sources", response=list[SourceOut], operation_id="list_sources")
@paginate
def list_sources(request: HttpRequest, dataset_id: int):
    """The names `compare` accepts: runs, imported files (external, gold, import) and campaign humans."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return [SourceOut(name=s.name, kind=s.kind) for s in available_sources(dataset)]


class GammaPendingOut(Schema):
    state: str
    detail: str
    retry_after: int


@router.get("/datasets/{dataset_id}/compare",
                     response={200: list[dict[str, Any]], 202: GammaPendingOut, 409: GammaPendingOut},
                     operation_id="compare_sources")
def compare_sources(
    request: HttpRequest, dataset_id: int, reference: str, sources: str = "", categories: bool = False,
    gamma: bool = False, aspect: str = "", format: str = "json",
):
    """`manage.py compare_sources` over HTTP; an unknown reference or source is a 422 naming the sources there are.
    With gamma=true a worker computes the figures (pygamma-agreement takes minutes): 202 with a Retry-After
    until the result is ready, then 200 with it (analytics.compare.gamma)."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if format not in ("json", "csv"):
        raise UserError("format must be json or csv", field="format")
    names = [n.strip() for n in sources.split(",") if n.strip()]
    check_aspect(dataset, aspect)
    # without gamma, quick: it checks the names (UnknownSource, a 422) before anything is queued
    rows = sources_compare(dataset, reference=reference, sources=names, by_category=categories, gamma=False,
                           aspect=aspect)
    if gamma:
        answer = gamma_answer(GammaQuestion(dataset_id=dataset.pk, reference=reference, sources=tuple(names),
                                            by_category=categories, aspect=aspect), user_id=request.user.pk)
        if answer.state != "done":
            status = 202 if answer.state == "pending" else 409
            response = JsonResponse({"state": answer.state, "detail": answer.detail,
                                     "retry_after": RETRY_AFTER_SECONDS}, status=status)
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        order = {name: n for n, name in enumerate(names)}  # the result is stored once for every order asked
        rows = sorted(answer.rows or [], key=lambda r: order.get(r.get("source"), len(order)))
    if format == "csv":
        return HttpResponse(comparison_csv(rows), content_type="text/csv; charset=utf-8")
    return rows

