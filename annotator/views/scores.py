"""The generic per-item score's endpoint: any screen whose protocol declares a score range posts the score here."""

from __future__ import annotations

from django.http import HttpResponse
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from annotator.access import assignment_to_edit
from annotator.engine.telemetry import clamp_ms
from annotator.protocols import hooks_for
from annotator.services.item_scores import item_score_set
from annotator.views.common import AppRequest
from annotator.views.marks import Own, own_work


@own_work(Own.ASSIGNMENT)
@require_POST
def item_score_view(request: AppRequest, pk: int) -> HttpResponse:
    """Set the item's score (`score`, `ms`); the answer is the screen's changed parts, out of band."""
    assignment = assignment_to_edit(request.user, pk)
    state = item_score_set(assignment=assignment, user=request.user, score=request.POST.get("score", ""),
                           ms=clamp_ms(request.POST.get("ms")))
    response = HttpResponse(hooks_for(assignment.campaign).oob(request, assignment))
    return trigger_client_event(response, "sj:notice", {"message": f"Score {state.score}."})
