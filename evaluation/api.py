"""Evaluation API: evaluator runs (more routes join as the jobs and analytics land)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja import Router, Schema

from evaluation.selectors import runs_for_home

router = Router(tags=["runs"])


class RunOut(Schema):
    id: int
    label: str
    evaluator: str
    dataset: str
    aspect: str
    status: str
    done_calls: int
    total_calls: int


@router.get("/runs", response=list[RunOut], operation_id="list_runs")
def list_runs(request: HttpRequest):
    if not request.user.sees_everything:
        raise PermissionDenied("Researchers and admins only.")
    return [
        RunOut(
            id=r.pk, label=r.label, evaluator=r.evaluator.name, dataset=r.dataset.name, aspect=r.aspect.name,
            status=r.status, done_calls=r.done_calls, total_calls=r.total_calls,
        )
        for r in runs_for_home()
    ]
