"""A comparison unit's endpoints: the choice (and its reason) and finishing the screen. The screen itself is the
item screen of the unit's first output (annotator.protocols.pairwise), `?unit=` naming which of its screens."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect, trigger_client_event

from annotator.access import assignment_to_edit
from annotator.engine.telemetry import clamp_ms
from annotator.protocols import hooks_for
from annotator.protocols.pairwise import unit_url
from annotator.rendering import from_browser_offset
from annotator.services.added_spans import AddedSpanError
from annotator.services.units import (
    UnitError,
    choice_set,
    next_open_unit,
    unit_assignments,
    unit_finish,
    unit_for_screen,
    unit_span_add,
    unit_span_remove,
)
from annotator.views.common import AppRequest
from annotator.views.marks import Own, own_work
from annotator.views.work import _seconds, _unprocessable
from corpus import cleaning
from corpus.protocols import pairwise


def _unit(request: AppRequest, pk: int):
    assignment = assignment_to_edit(request.user, pk)
    unit = unit_for_screen(assignment, request.POST.get("unit"))
    if unit is None:
        raise UnitError(f"item {assignment.order} is on no comparison screen", field="unit")
    return assignment, unit


@own_work(Own.ASSIGNMENT)
@require_POST
def unit_choice_view(request: AppRequest, pk: int) -> HttpResponse:
    """Set the screen's choice (`choice`: 1, 2 or tie) and/or its reason (`reason`), with `ms`; the answer is the
    screen's changed parts, out of band."""
    assignment, unit = _unit(request, pk)
    unit = choice_set(unit=unit, user=request.user, choice=request.POST.get("choice"),
                      reason=request.POST.get("reason"), ms=clamp_ms(request.POST.get("ms")))
    response = HttpResponse(hooks_for(assignment.campaign).oob(request, assignment))
    said = ("not chosen yet" if unit.choice is None else "a tie" if unit.choice == pairwise.TIE
            else f"output {unit.choice} is better")
    return trigger_client_event(response, "sj:notice", {"message": f"Saved: {said}."})


@own_work(Own.ASSIGNMENT)
@require_POST
def unit_finish_view(request: AppRequest, pk: int) -> HttpResponse:
    """Finish the screen and open the annotator's next unfinished screen (their queue when none is left)."""
    assignment, unit = _unit(request, pk)
    try:
        unit_finish(unit=unit, user=request.user, seconds=_seconds(request))
    except UnitError as exc:
        return _unprocessable(str(exc))
    following = next_open_unit(unit)
    target = unit_url(following) if following else reverse("campaign_entry", args=[unit.campaign_id])
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)


def _offset(request: AppRequest, name: str) -> int:
    raw = request.POST.get(name, "")
    if raw == "":
        raise UnitError(f"{name}: an offset into the output is needed", field=name)
    return cleaning.digits(raw, name, default=0)


@own_work(Own.ASSIGNMENT)
@require_POST
def unit_span_add_view(request: AppRequest, pk: int) -> HttpResponse:
    """Mark a stretch of the output at `position` (1 or 2) from `start` to `end` (offsets as the page counts them),
    with `ms`; the answer is the screen's changed parts, out of band."""
    assignment, unit = _unit(request, pk)
    members = {str(n): a for n, a in enumerate(unit_assignments(unit), start=1)}
    output = members.get(request.POST.get("position", ""))
    if output is None:
        return _unprocessable(f"position: 1 to {len(members)}, the output's place on the screen")
    try:
        text = output.item.output
        span = unit_span_add(unit=unit, user=request.user, position=request.POST.get("position"),
                             start=from_browser_offset(text, _offset(request, "start")),
                             end=from_browser_offset(text, _offset(request, "end")),
                             ms=clamp_ms(request.POST.get("ms")))
    except AddedSpanError as exc:
        return _unprocessable(str(exc))
    response = HttpResponse(hooks_for(assignment.campaign).oob(request, assignment))
    return trigger_client_event(response, "sj:notice", {"message": f"Marked “{span.text[:60]}”."})


@own_work(Own.ASSIGNMENT)
@require_POST
def unit_span_remove_view(request: AppRequest, pk: int) -> HttpResponse:
    """Remove one of the judge's spans on the screen (`span`), with `ms`."""
    assignment, unit = _unit(request, pk)
    text = unit_span_remove(unit=unit, user=request.user, span_pk=request.POST.get("span", ""),
                            ms=clamp_ms(request.POST.get("ms")))
    response = HttpResponse(hooks_for(assignment.campaign).oob(request, assignment))
    return trigger_client_event(response, "sj:notice", {"message": f"Removed the span “{text[:60]}”."})
