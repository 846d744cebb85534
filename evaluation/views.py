"""Pages of the evaluation app: evaluator runs."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from evaluation.models import EvaluatorRun


@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    if not request.user.sees_everything:
        raise PermissionDenied("Researchers and admins only.")
    run = get_object_or_404(EvaluatorRun.objects.select_related("evaluator", "dataset", "aspect"), pk=pk)
    return render(request, "evaluation/run_detail.html", {"run": run})
