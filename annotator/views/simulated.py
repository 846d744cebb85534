"""Deleting a simulated evaluator run with the campaigns built on it, after a confirmation that lists them."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from accounts.access import AccessError, require_admin
from annotator.services.simulated import simulated_run_campaigns, simulated_run_delete
from annotator.views.common import AppRequest
from evaluation.models import EvaluatorRun


@require_http_methods(["GET", "POST"])
def simulated_run_delete_view(request: AppRequest, pk: int) -> HttpResponse:
    require_admin(request)
    run = get_object_or_404(EvaluatorRun.objects.select_related("dataset", "aspect"), pk=pk)
    if not run.simulated:
        raise AccessError.conflict(f"Evaluator run {run.label} was answered by a real server: only simulated evaluator "
                                   "runs are deleted with their campaigns. Cancel it instead, or ask the operator.")
    if request.method == "POST":
        names = simulated_run_delete(run=run)
        gone = f" and campaign{'s' if len(names) != 1 else ''} {', '.join(names)}" if names else ""
        messages.success(request, f"Deleted simulated evaluator run {run.label}{gone}.")
        return redirect("home")
    return render(request, "annotator/simulated_run_delete.html",
                  {"run": run, "campaigns": simulated_run_campaigns(run)})
