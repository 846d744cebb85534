"""The ESA item screen: error spans marked as Minor or Major (mouse or keys), missing content, then the score.

The annotator selects a span (mouse, or `s` and Shift+arrows) and presses a severity key; `o` marks content
missing at the end; `j`/`k` focus a span, which a severity key re-grades, `r` resizes and `x` deletes; `d` says
the spans are done, and only then the 0-100 slider opens (arrows, PageUp/PageDown, Home/End, digits). On an
ESA^AI item the machine's spans are already marked (annotator.services.esa). Every answer is the changed parts
of the screen as out-of-band swaps, as on the MQM screen.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from annotator.access import added_span_for_user, assignment_to_edit
from annotator.engine.phases import Phase
from annotator.engine.telemetry import clamp_ms
from annotator.models import Assignment, Campaign, EsaPrefill, EsaScore
from annotator.protocols import hooks_for
from annotator.rendering import from_browser_offset, render_inputs, to_browser_offset
from annotator.selectors.campaigns import neighbour_assignments
from annotator.selectors.esa import SPANS_DONE, esa_arm
from annotator.selectors.spans import added_spans
from annotator.services.added_spans import KEEP
from annotator.services.esa import (
    esa_missing_add,
    esa_score_set,
    esa_span_add,
    esa_span_change,
    esa_span_delete,
    esa_spans_done,
)
from annotator.views.common import AppRequest
from annotator.views.marks import Own, own_work
from corpus import cleaning
from corpus.models import ErrorSpan
from corpus.protocols import esa
from errors import BadRequest

SCREEN_PARTS = ("output", "esa-spans", "esa-score", "item-status")
"""The parts of the screen an action changes: swapped out of band, and re-read from the page after Back or a 409."""
SHORTCUTS = (
    ("mouse / s", "select an error span (s: arrows move, Shift+arrows extend, Alt+arrows by word, Enter takes it)"),
    *((t.key, f"{t.label}: {t.help} Saves the selection, or re-grades the focused span.") for t in esa.SEVERITIES),
    (esa.MISSING_KEY, f"content is missing: marks {esa.MISSING_TOKEN} at the end, then w or e for its severity"),
    ("j / k", "focus the next / previous span"),
    ("r", "resize the focused span: arrows move its end, Shift+arrows its start (Alt: by word); Enter saves"),
    ("x", "delete the focused span"),
    ("d", "spans done: the score opens (the spans can no longer change)"),
    ("← → / ↑ ↓", "score -1 / +1"), ("PageDown / PageUp", "score -10 / +10"), ("Home / End", "score 0 / 100"),
    ("0-9", "type the score (e.g. 7 then 5 for 75)"),
    ("Esc", "cancel the selection, the focus or the resize"),
    ("u / Ctrl+Z", "undo my last span change; Shift+U / Ctrl+Y redo (until the spans are done)"),
    ("f", "finish this item and open the next one (after the score)"),
    ("n / p", "next / previous item"), ("g", "guidelines"), ("?", "this list"),
)


def _spans(assignment: Assignment) -> tuple[list[ErrorSpan], ErrorSpan | None]:
    """The annotator's located spans in text order (each with its severity's name and whether it was
    pre-filled), and their missing-content error if any."""
    prefilled = set(EsaPrefill.objects.filter(assignment_id=assignment.pk).values_list("span_id", flat=True))
    located, missing = [], None
    for span in added_spans(assignment):
        span.severity_name = esa.severity_of_code(span.severity)
        span.severity_label = esa.SEVERITY_LABELS[span.severity_name]
        span.prefilled = span.pk in prefilled
        if span.start is not None:  # the page counts CR LF as one character
            output = assignment.item.output
            span.page_start, span.page_end = to_browser_offset(output, span.start), to_browser_offset(output, span.end)
        if span.start is None:
            missing = span
        else:
            located.append(span)
    return located, missing


def screen_context(request: AppRequest, assignment: Assignment) -> dict:
    campaign = assignment.campaign
    state = EsaScore.objects.filter(assignment_id=assignment.pk).first()
    assignment.refresh_from_db(fields=["phase", "status", "finished_at", "boundary_at", "revealed_at"])
    spans_done = assignment.phase in SPANS_DONE
    can_edit = assignment.annotator_id == request.user.pk and campaign.status == Campaign.Status.OPEN
    located, missing = _spans(assignment)
    return {
        "assignment": assignment, "campaign": campaign, "item": assignment.item, "can_edit": can_edit,
        "spans": located, "missing": missing, "all_spans": located + ([missing] if missing else []),
        "state": state, "spans_done": spans_done, "score": state.score if state else None,
        "prefilled": bool(state and state.prefilled), "arm": esa_arm(assignment),
        "severities": [{"value": t.value, "label": t.label, "key": t.key} for t in esa.SEVERITIES],
        "missing_token": esa.MISSING_TOKEN, "missing_key": esa.MISSING_KEY,
        "score_min": esa.SCORE_MIN, "score_max": esa.SCORE_MAX, "score_labels": esa.SCORE_LABELS,
        "output_header": assignment.item.dataset.output_header,
    }


def page_context(request: AppRequest, assignment: Assignment, context: dict) -> dict:
    """What the whole screen shows beyond its parts: the inputs, the neighbours, the shortcuts and the keys."""
    prev_pk, next_pk, n_assignments = neighbour_assignments(assignment)
    return {"inputs": render_inputs(assignment.item.inputs), "prev_pk": prev_pk, "next_pk": next_pk,
            "n_assignments": n_assignments, "shortcuts": SHORTCUTS,
            "keys": {"page": esa.SCORE_PAGE, "step": esa.SCORE_STEP}, "sync_parts": SCREEN_PARTS}


def screen_oob(request: AppRequest, assignment: Assignment) -> str:
    """The parts of the screen an action changes, as out-of-band swaps (undo and redo use them too)."""
    return hooks_for(assignment.campaign).oob(request, assignment)


def _answer(request: AppRequest, assignment: Assignment, message: str) -> HttpResponse:
    return trigger_client_event(HttpResponse(screen_oob(request, assignment)), "sj:notice", {"message": message})


def _offset(request: AppRequest, output: str, name: str) -> int:
    raw = request.POST.get(name, "")
    return from_browser_offset(output, cleaning.digits(raw, name, default=-1) if raw.strip() else -1)


def _ms(request: AppRequest) -> int | None:
    return clamp_ms(request.POST.get("ms"))


@own_work(Own.ASSIGNMENT)
@require_POST
def esa_span_add_view(request: AppRequest, pk: int) -> HttpResponse:
    """Store one span (offsets as the page counts them) with a severity by name."""
    assignment = assignment_to_edit(request.user, pk)
    output = assignment.item.output
    span = esa_span_add(assignment=assignment, user=request.user, start=_offset(request, output, "start"),
                        end=_offset(request, output, "end"), severity=request.POST.get("severity", ""),
                        ms=_ms(request))
    label = esa.SEVERITY_LABELS[esa.severity_of_code(span.severity)]
    return _answer(request, assignment, f"{label} error at “{span.text[:60]}”.")


@own_work(Own.ASSIGNMENT)
@require_POST
def esa_missing_add_view(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    span = esa_missing_add(assignment=assignment, user=request.user, severity=request.POST.get("severity", ""),
                           ms=_ms(request))
    label = esa.SEVERITY_LABELS[esa.severity_of_code(span.severity)]
    return _answer(request, assignment, f"{label}: content is missing.")


@own_work(Own.ADDED_SPAN)
@require_POST
def esa_span_change_view(request: AppRequest, span_pk: int) -> HttpResponse:
    """Re-grade (severity) and/or resize (start and end, as the page counts them) one span."""
    span, assignment = added_span_for_user(request.user, span_pk)
    output = assignment.item.output
    resize = "start" in request.POST or "end" in request.POST
    if resize and not ("start" in request.POST and "end" in request.POST):
        raise BadRequest("a resize sends both start and end", field=("start", "end"))
    severity = request.POST.get("severity")
    esa_span_change(span=span, assignment=assignment, user=request.user,
                    severity=KEEP if severity is None else severity,
                    start=_offset(request, output, "start") if resize else KEEP,
                    end=_offset(request, output, "end") if resize else KEEP, ms=_ms(request))
    return _answer(request, assignment, "Resized the span." if resize else "Re-graded the span.")


@own_work(Own.ADDED_SPAN)
@require_POST
def esa_span_remove_view(request: AppRequest, span_pk: int) -> HttpResponse:
    span, assignment = added_span_for_user(request.user, span_pk)
    esa_span_delete(span=span, assignment=assignment, user=request.user, ms=_ms(request))
    return _answer(request, assignment, "Deleted the span.")


@own_work(Own.ASSIGNMENT)
@require_POST
def esa_spans_done_view(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    was_marking = assignment.phase == Phase.MARKING
    esa_spans_done(assignment=assignment, user=request.user, ms=_ms(request),
                   seconds=cleaning.digits(request.POST.get("seconds", "0") or "0", "seconds", default=0))
    if was_marking:
        assignment.refresh_from_db()
    return _answer(request, assignment, "Spans done: now the score.")


@own_work(Own.ASSIGNMENT)
@require_POST
def esa_score_view(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    state = esa_score_set(assignment=assignment, user=request.user, score=request.POST.get("score", ""),
                          ms=_ms(request))
    return _answer(request, assignment, f"Score {state.score}.")
