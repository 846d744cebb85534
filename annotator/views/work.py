"""The annotation screen: one item, its machine errors under neutral labels, verdicts saved per click."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh, trigger_client_event

from accounts.services.settings import user_set_auto_advance
from annotator import checks
from annotator.access import (
    added_span_for_user,
    assignment_for_user,
    assignment_for_work,
    assignment_to_edit,
)
from annotator.engine.phases import shows_machine_spans
from annotator.engine.telemetry import clamp_ms
from annotator.forms import AddedSpanEditForm, AddedSpanForm
from annotator.models import Assignment, Campaign, SpanJudgment
from annotator.protocols import hooks_for
from annotator.rendering import from_browser_offset
from annotator.selectors.campaigns import next_open_assignment
from annotator.selectors.spans import (
    ErrorRow,
    added_spans,
    item_errors,
    judged_span_by_handle,
    span_handle,
    unprimed_span_ids,
)
from annotator.services.added_spans import (
    AddedSpanError,
    added_span_create,
    added_span_delete,
    added_span_update,
)
from annotator.services.assignments import (
    AssignmentError,
    assignment_add_time,
    assignment_finish,
)
from annotator.services.control_arm import assignment_reveal
from annotator.services.judgments import JudgmentError, StaleJudgment, judgment_set
from annotator.services.occurrences import occurrence_pick, span_occurrences
from annotator.services.opening import item_open
from annotator.services.undo import StepResult, action_redo, action_undo
from annotator.views.common import AppRequest
from annotator.views.marks import Own, own_work
from corpus import cleaning
from corpus.protocols import opennlgauge as protocol

SCREEN_PARTS = ("errors", "output", "added-list", "item-status")
"""The parts of the screen an action changes: swapped out of band, and re-read from the page after Back or a 409."""


@dataclass(frozen=True)
class Choice:
    """One chip. A verdict chip sets `field` to `value`; a flag chip (value "") switches its own field."""

    field: str
    value: str
    label: str
    key: str


def _group_choices(group: protocol.Group) -> tuple[Choice, ...]:
    if group.field:
        return tuple(Choice(group.field, t.value, t.label, t.key) for t in group.terms)
    return tuple(Choice(t.value, "", t.label, t.key) for t in group.terms)


# Chips, keys and labels all come from the protocol module; nothing here names a verdict or a flag.
CHIP_GROUPS: tuple[tuple[protocol.Group, tuple[Choice, ...]], ...] = tuple(
    (g, _group_choices(g)) for g in protocol.GROUPS
)
SHORTCUTS = (
    ("j / ↓", "next error"), ("k / ↑", "previous error"),
    *protocol.shortcut_lines(),
    ("- / =", "lower / raise the corrected severity"), ("0", "clear the severity correction"),
    ("m", "write a comment (Enter saves, Esc leaves)"),
    ("u / Ctrl+Z", "undo my last action on this item (verdicts, flags, severity, comment, added errors)"),
    ("Shift+U / Ctrl+Y", "redo what was undone"),
    ("o / Shift+O", "a location found more than once: pick the next occurrence / none of them (not in the text)"),
    ("s", "select text in the output with the keyboard (arrows; Shift+arrows extend; Alt+arrows by word)"),
    ("a", "add the selected text as a missed error (a mouse selection snaps to whole words; hold Alt to keep "
          "it exact)"),
    ("1-9 (in the add dialog)", "choose the category of the added error"),
    ("f", "finish this item and open the next one"),
    ("d", "done marking: show the machine's errors (on items you first mark on your own)"),
    ("n / p", "next / previous item"),
    ("g", "guidelines"), ("?", "this list"), ("Esc", "close a dialog or leave a field"),
)


@dataclass(frozen=True)
class Chip:
    choice: Choice
    pressed: bool
    post_value: str


def _chip(choice: Choice, judgment: SpanJudgment | None) -> Chip:
    current = getattr(judgment, choice.field) if judgment else None
    if choice.value:
        return Chip(choice, current == choice.value, choice.value)
    return Chip(choice, bool(current), "false" if current else "true")


def _chips(row: ErrorRow) -> dict:
    j = row.judgment
    corrected = j.corrected_severity if j else None
    return {
        "groups": [
            {"name": g.name, "is_flags": g.field is None, "icon": "✓" if g.field else "⚑",
             "chips": [_chip(c, j) for c in choices]}
            for g, choices in CHIP_GROUPS
        ],
        "severity": [
            Chip(Choice("corrected_severity", str(n), str(n), ""), corrected == n, str(n)) for n in protocol.SEVERITIES
        ],
    }


OCCURRENCE_CONTEXT = 24
"""Characters shown either side of each candidate occurrence, so the expert can tell them apart."""


def _occurrences(row: ErrorRow, output: str) -> list[dict]:
    """The candidates of an ambiguous span with their context; `picked` marks the one that counts now."""
    j = row.judgment
    start, _ = j.offsets((row.span.start, row.span.end)) if j else (row.span.start, row.span.end)
    return [
        {"index": n, "start": o.start, "end": o.end, "text": output[o.start:o.end], "picked": o.start == start,
         "before": output[max(0, o.start - OCCURRENCE_CONTEXT):o.start],
         "after": output[o.end:o.end + OCCURRENCE_CONTEXT]}
        for n, o in enumerate(span_occurrences(row.span, output))
    ]


def _card(row: ErrorRow, assignment: Assignment, can_edit: bool, saved: bool = False) -> dict:
    j = row.judgment
    corrected = j.corrected_severity if j else None
    # Only an ambiguous span's card needs the output (its candidates' context): a save reads no item text otherwise.
    occurrences = _occurrences(row, assignment.item.output) if row.span.ambiguous else []
    picked = next((o for o in occurrences if o["picked"]), None)
    return {
        "row": row, "chips": _chips(row), "assignment": assignment, "can_edit": can_edit, "saved": saved,
        "effective_severity": corrected or row.span.severity or 0,
        # Reversed once per card rather than once per chip (22 chips): saves are the hot path.
        "save_url": reverse("judgment_save", args=[assignment.pk, row.handle]),
        "occurrences": occurrences, "picked_none": bool(j and j.picked_none), "pick_made": bool(j and j.is_picked()),
        "picked_index": picked["index"] if picked else -1,
        "occurrence_url": reverse("occurrence_save", args=[assignment.pk, row.handle]) if occurrences else "",
    }


N_STYLES = 6
"""Evaluator labels cycle through this many colour + underline styles (static/css/app.css, .ev-0 ... .ev-5)."""


def _evaluator_styles(rows: list[ErrorRow]) -> list[dict]:
    """Give each neutral label a style by its place in the label order (blind: nothing but the label)."""
    labels = sorted({r.label for r in rows})
    style = {label: i % N_STYLES for i, label in enumerate(labels)}
    for row in rows:
        row.style = style[row.label]
    return [{"label": label, "style": style[label], "short": label.removeprefix("Evaluator ")} for label in labels]


def screen_context(request: AppRequest, assignment: Assignment) -> dict:
    rows, groups = item_errors(assignment)
    evaluators = _evaluator_styles(rows)
    added = added_spans(assignment)
    categories = assignment.campaign.categories or []
    keys = {c["name"]: c["key"] for c in categories}
    unprimed = unprimed_span_ids(assignment)
    for span in added:
        span.cat_key = keys.get(span.category, "")  # its colour class (static/css/app.css mirrors the palette)
        span.unprimed = span.pk in unprimed  # marked before the reveal: own style, locked
    can_edit = assignment.annotator_id == request.user.pk and assignment.campaign.status == Campaign.Status.OPEN
    return {
        "assignment": assignment, "campaign": assignment.campaign, "item": assignment.item,
        "rows": rows, "groups": [
            {"group": g, "cards": [_card(r, assignment, can_edit) for r in g.rows],
             "n_evaluators": len({r.label for r in g.rows})} for g in groups
        ],
        "added": added, "can_edit": can_edit,
        "n_complete": sum(r.is_complete for r in rows), "n_total": len(rows),
        "aspects": assignment.campaign.aspects, "severities": protocol.SEVERITIES,
        "evaluators": evaluators, "categories": categories,
        # Every partial that re-renders the output keeps the dataset's own heading for it.
        "output_header": assignment.item.dataset.output_header or "Output",
        "marking": not shows_machine_spans(assignment.phase), "n_unprimed": len(unprimed),
    }


@own_work(Own.ASSIGNMENT)
@never_cache  # Back and Forward ask the server again instead of showing the item as it was first served
@require_GET
def item_screen(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_for_user(request.user, pk)
    mine = assignment.annotator_id == request.user.pk
    if mine and (gate := checks.installed().gate(assignment)) is not None:
        return render(request, "annotator/qualification_gate.html",
                      {"campaign": assignment.campaign, "message": gate}, status=403)
    item_open(assignment=assignment, user=request.user)  # its own, open, unfinished item: the first open pre-fills
    return hooks_for(assignment.campaign).page(request, assignment)


def _unprocessable(message: str) -> HttpResponse:
    """A 422 whose text htmx shows in the message area (see static/js/annotate/main.js)."""
    response = HttpResponse(message, status=422, content_type="text/plain; charset=utf-8")
    return trigger_client_event(response, "sj:problem", {"message": message})


def _version(raw: str) -> int | None:
    """The card version a save was typed against (None when the client sent none, e.g. an API-style post)."""
    return _posted(raw, "version") if raw.strip() else None


@own_work(Own.ASSIGNMENT)
@require_POST
def judgment_save(request: AppRequest, pk: int, span_pk: int) -> HttpResponse:
    """Set one field of the user's judgment of one span and answer with the re-rendered error card.

    The page sends the card's `version` (what the key was typed against): a save against an older version is
    refused with 409 and the card as stored, so a late key never lands on a state the expert did not see."""
    assignment = assignment_for_work(request.user, pk)
    span, label = judged_span_by_handle(assignment, span_pk)
    field = request.POST.get("field", "")
    number = _posted(request.POST.get("number", ""), "number")
    style = _posted(request.POST.get("style", ""), "style") % N_STYLES
    try:
        judgment = judgment_set(assignment=assignment, span=span, user=request.user,
                                changes={field: request.POST.get("value", "")},
                                expected_version=_version(request.POST.get("version", "")),
                                ms=clamp_ms(request.POST.get("ms")))
    except StaleJudgment as exc:
        current = SpanJudgment.objects.filter(assignment_id=assignment.pk, span_id=span.pk).first()
        row = ErrorRow(span=span, label=label, number=number, judgment=current, style=style, handle=span_pk)
        response = render(request, "annotator/item.html#error-card", _card(row, assignment, True), status=409)
        return trigger_client_event(response, "sj:problem", {"message": str(exc)})
    except JudgmentError as exc:
        return _unprocessable(str(exc))
    row = ErrorRow(span=span, label=label, number=number, judgment=judgment, style=style, handle=span_pk)
    return render(request, "annotator/item.html#error-card", _card(row, assignment, True, saved=True))


_PICKS = {"none": {"none": True}, "reset": {"reset": True}}


@own_work(Own.ASSIGNMENT)
@require_POST
def occurrence_save(request: AppRequest, pk: int, span_pk: int) -> HttpResponse:
    """Pick an occurrence of an ambiguous span (`value`: its index, "none" or "reset") and answer with the card,
    versioned like judgment_save (409 and the stored card when stale)."""
    assignment = assignment_for_work(request.user, pk)
    span, label = judged_span_by_handle(assignment, span_pk)
    value = request.POST.get("value", "").strip()
    number = _posted(request.POST.get("number", ""), "number")
    style = _posted(request.POST.get("style", ""), "style") % N_STYLES
    pick = _PICKS.get(value) or {"index": _posted(value, "index")}
    try:
        judgment = occurrence_pick(assignment=assignment, span=span, user=request.user, **pick,
                                   expected_version=_version(request.POST.get("version", "")),
                                   ms=clamp_ms(request.POST.get("ms")))
    except StaleJudgment as exc:
        current = SpanJudgment.objects.filter(assignment_id=assignment.pk, span_id=span.pk).first()
        row = ErrorRow(span=span, label=label, number=number, judgment=current, style=style, handle=span_pk)
        response = render(request, "annotator/item.html#error-card", _card(row, assignment, True), status=409)
        return trigger_client_event(response, "sj:problem", {"message": str(exc)})
    row = ErrorRow(span=span, label=label, number=number, judgment=judgment, style=style, handle=span_pk)
    return render(request, "annotator/item.html#error-card", _card(row, assignment, True, saved=True))


def _screen_oob(request: AppRequest, assignment: Assignment) -> str:
    """The parts of the screen an undo or redo can change, as out-of-band swaps."""
    return hooks_for(assignment.campaign).oob(request, assignment)


def _step_response(request: AppRequest, assignment: Assignment, result: StepResult | None, none: str) -> HttpResponse:
    if result is None:
        # Not a refusal on this screen: typing u with nothing left is ordinary, so the page hears a notice
        # (the assignments API answers the same case with 200 and "undone": false).
        return trigger_client_event(HttpResponse(status=204), "sj:notice", {"message": none})
    response = HttpResponse(_screen_oob(request, assignment))
    return trigger_client_event(response, "sj:undone", {
        "span": span_handle(assignment.pk, result.span_id) if result.span_id else None,
        "message": result.message, "reopened": result.reopened,
    })


@own_work(Own.ASSIGNMENT)
@require_POST
def action_undo_view(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    result = action_undo(assignment=assignment, user=request.user)
    return _step_response(request, assignment, result, "Nothing to undo.")


@own_work(Own.ASSIGNMENT)
@require_POST
def action_redo_view(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    result = action_redo(assignment=assignment, user=request.user)
    return _step_response(request, assignment, result, "Nothing to redo.")


@own_work(Own.SETTING)
@require_POST
def auto_advance_view(request: AppRequest) -> HttpResponse:
    """Switch the signed-in user's auto-advance setting (a checkbox on the item screen)."""
    on = request.POST.get("auto_advance", "") in ("on", "true", "1")
    user_set_auto_advance(user=request.user, on=on)
    message = "Auto-advance is on." if on else "Auto-advance is off."
    return trigger_client_event(HttpResponse(status=204), "sj:notice", {"message": message})


def _added_response(request: AppRequest, assignment: Assignment, message: str) -> HttpResponse:
    context = screen_context(request, assignment)
    context["oob"] = True
    html = render_to_string("annotator/item.html#added-list", context, request=request)
    html += render_to_string("annotator/item.html#output", context, request=request)
    html += render_to_string("annotator/item.html#item-status", context, request=request)
    return trigger_client_event(HttpResponse(html), "sj:notice", {"message": message})


@own_work(Own.ASSIGNMENT)
@require_POST
def added_span_add(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    form = AddedSpanForm(request.POST)
    if not form.is_valid():
        return _unprocessable("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    data = form.cleaned_data
    output = assignment.item.output
    try:
        # The page counts offsets the way the browser shows the text; the service takes stored offsets.
        span = added_span_create(
            assignment=assignment, user=request.user, start=from_browser_offset(output, data["start"]),
            end=from_browser_offset(output, data["end"]),
            aspect=data["aspect"] or None, category=data["category"], severity=data["severity"], note=data["note"],
            ms=clamp_ms(request.POST.get("ms")),
        )
    except AddedSpanError as exc:
        return _unprocessable(str(exc))
    return _added_response(request, assignment, f"Added a missed error at “{span.text[:60]}”.")


@own_work(Own.ADDED_SPAN)
@require_POST
def added_span_edit(request: AppRequest, span_pk: int) -> HttpResponse:
    span, assignment = added_span_for_user(request.user, span_pk)
    form = AddedSpanEditForm(request.POST)
    if not form.is_valid():
        return _unprocessable("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    try:
        added_span_update(span=span, assignment=assignment, user=request.user, **form.cleaned_data,
                          ms=clamp_ms(request.POST.get("ms")))
    except AddedSpanError as exc:
        return _unprocessable(str(exc))
    return _added_response(request, assignment, "Saved the added error.")


@own_work(Own.ADDED_SPAN)
@require_POST
def added_span_remove(request: AppRequest, span_pk: int) -> HttpResponse:
    span, assignment = added_span_for_user(request.user, span_pk)
    try:
        added_span_delete(span=span, assignment=assignment, user=request.user)
    except AddedSpanError as exc:
        return _unprocessable(str(exc))
    return _added_response(request, assignment, "Deleted the added error.")


def _posted(raw: str, name: str) -> int:
    """A small whole number the page posts (0 when absent); anything but the digits 0-9 is refused (422, as the
    API refuses the same value)."""
    return cleaning.digits(raw, name, default=0)


def _seconds(request: AppRequest) -> int:
    return _posted(request.POST.get("seconds", "0"), "seconds")


@own_work(Own.ASSIGNMENT)
@vary_on_headers("HX-Request")
@require_POST
def assignment_finish_view(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    try:
        assignment_finish(assignment=assignment, user=request.user, seconds=_seconds(request))
    except AssignmentError as exc:
        return _unprocessable(str(exc))
    # A finished training item opens again with its key beside the annotator's verdicts.
    next_pk = assignment.pk if assignment.is_training else next_open_assignment(assignment)
    target = reverse("item_screen", args=[next_pk]) if next_pk else reverse("campaign_entry",
                                                                             args=[assignment.campaign_id])
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)


@own_work(Own.ASSIGNMENT)
@require_POST
def assignment_reveal_view(request: AppRequest, pk: int) -> HttpResponse:
    """Done marking: the marks so far are fixed and the page reloads with the machine errors."""
    assignment = assignment_to_edit(request.user, pk)
    assignment_reveal(assignment=assignment, user=request.user, seconds=_seconds(request))
    if request.htmx:
        return HttpResponseClientRefresh()
    return redirect("item_screen", pk=assignment.pk)


@own_work(Own.ASSIGNMENT)
@require_POST
def assignment_time(request: AppRequest, pk: int) -> HttpResponse:
    assignment = assignment_to_edit(request.user, pk)
    # A closed campaign no longer counts time; there is nothing for the page to do about it.
    with contextlib.suppress(AssignmentError):
        assignment_add_time(assignment=assignment, user=request.user, seconds=_seconds(request))
    return HttpResponse(status=204)
