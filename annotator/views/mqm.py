"""The MQM item screen: the translation beside its source and its document; errors marked by mouse or by keys.

The annotator selects a span (mouse, or `s` and Shift+arrows), picks its category from the campaign's tree with
the digits (a second digit for a subcategory), and its severity with a key (corpus.protocols.mqm.SEVERITIES);
`t` marks the whole segment as a Non-translation. Each error is an added span of the annotator's own source in
the campaign (annotator.services.added_spans), so undo, redo, finishing, exports and the report work as for
every protocol.
"""

from __future__ import annotations

from types import SimpleNamespace

from django.http import HttpResponse
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from annotator.access import added_span_for_user, assignment_to_edit, check_protocol
from annotator.engine.telemetry import clamp_ms
from annotator.models import Assignment, Campaign
from annotator.protocols import hooks_for
from annotator.rendering import from_browser_offset
from annotator.selectors.campaigns import neighbour_assignments
from annotator.selectors.spans import added_spans
from annotator.services.added_spans import AddedSpanError, marked_text
from annotator.services.mqm import mqm_error_create, mqm_error_delete
from annotator.views.common import AppRequest
from annotator.views.marks import Own, own_work
from corpus import protocols
from corpus.models import ErrorSpan, Item
from corpus.protocols import mqm

SCREEN_PARTS = ("source", "output", "mqm-errors", "item-status")
"""The parts of the screen an action changes: swapped out of band, and re-read from the page after Back or a 409."""
MAX_CONTEXT = 400  # segments of one document shown around the current one
SHORTCUTS = (
    ("mouse / s", "select the erroneous text (s: arrows move, Shift+arrows extend, Alt+arrows by word)"),
    ("mouse / o", "select in the source: an omission, where the source says what the translation lacks"),
    ("1-9", "category of the selection (a second digit picks a subcategory)"),
    *((t.key, f"severity {t.label}: {t.help}") for t in mqm.SEVERITIES),
    (mqm.NON_TRANSLATION_KEY, "the whole segment is a Non-translation (Major)"),
    ("Esc", "cancel the selection or the category"),
    ("u / Ctrl+Z", "undo my last action on this item"), ("Shift+U / Ctrl+Y", "redo"),
    ("f", "finish this item and open the next one"), ("n / p", "next / previous item"),
    ("g", "guidelines"), ("?", "this list"),
)


def document_context(item: Item) -> list[dict]:
    """The segments of the item's document as this system translated them, in order (the current one marked);
    just the item when it came from no document."""
    place = (item.extra or {}).get("mqm") or {}
    if not place.get("doc"):
        return [{"pk": item.pk, "source": _source(item.inputs), "target": item.output, "current": True}]
    rows = (Item.objects.filter(dataset_id=item.dataset_id, system=item.system, extra__mqm__doc=place["doc"])
            .order_by("position").values("pk", "inputs", "output")[:MAX_CONTEXT])
    return [{"pk": r["pk"], "source": _source(r["inputs"]), "target": r["output"], "current": r["pk"] == item.pk}
            for r in rows]


_source = protocols.source_text


def _tree(options: dict) -> list[dict]:
    """The campaign's tree with the digit keys that pick each category, as the page's JSON."""
    return [{"name": c.name, "key": str(n), "children": [
        {"name": child, "full": f"{c.name}/{child}", "key": str(m)} for m, child in enumerate(c.children, 1)]}
        for n, c in enumerate(protocols.mqm_tree(options), 1)]


def _errors(assignment: Assignment) -> list[ErrorSpan]:
    spans = added_spans(assignment)
    for span in spans:
        span.severity_name = mqm.severity_of_code(span.severity)
        span.severity_label = mqm.SEVERITY_LABELS[span.severity_name]
    return spans


def _in_source(errors: list[ErrorSpan]) -> list[SimpleNamespace]:
    """The errors marked in the source, as the highlighter reads spans (offsets into the text it cuts)."""
    return [SimpleNamespace(pk=e.pk, start=e.source_start, end=e.source_end) for e in errors if e.in_source]


def screen_context(request: AppRequest, assignment: Assignment) -> dict:
    campaign = assignment.campaign
    can_edit = assignment.annotator_id == request.user.pk and campaign.status == Campaign.Status.OPEN
    tree = _tree(campaign.protocol_options)
    errors = _errors(assignment)
    return {
        "assignment": assignment, "campaign": campaign, "item": assignment.item, "can_edit": can_edit,
        "errors": errors, "source_errors": _in_source(errors), "rows": [], "tree": tree,
        "source": _source(assignment.item.inputs), "output_header": assignment.item.dataset.output_header,
        "severities": [{"value": t.value, "label": t.label, "key": t.key} for t in mqm.SEVERITIES],
        "non_translation": mqm.NON_TRANSLATION if any(c["name"] == mqm.NON_TRANSLATION for c in tree) else "",
        "non_translation_key": mqm.NON_TRANSLATION_KEY,
    }


def page_context(request: AppRequest, assignment: Assignment, context: dict) -> dict:
    """What the whole screen shows beyond its parts: the document, the neighbours and the shortcuts."""
    prev_pk, next_pk, n_assignments = neighbour_assignments(assignment)
    # the Non-translation key only where the campaign's tree has the category
    shortcuts = [s for s in SHORTCUTS if context["non_translation"] or s[0] != mqm.NON_TRANSLATION_KEY]
    return {"document": document_context(assignment.item), "prev_pk": prev_pk, "next_pk": next_pk,
            "n_assignments": n_assignments, "shortcuts": shortcuts, "sync_parts": SCREEN_PARTS}


def screen_oob(request: AppRequest, assignment: Assignment) -> str:
    """The parts of the screen an action changes, as out-of-band swaps (undo and redo use them too)."""
    return hooks_for(assignment.campaign).oob(request, assignment)


def _problem(message: str) -> HttpResponse:
    response = HttpResponse(message, status=422, content_type="text/plain; charset=utf-8")
    return trigger_client_event(response, "sj:problem", {"message": message})


@own_work(Own.ASSIGNMENT)
@require_POST
def mqm_error_add(request: AppRequest, pk: int) -> HttpResponse:
    """Store one error (offsets as the page counts them in the translation, or in the source with side=source; a
    category of the tree, a severity by name)."""
    assignment = assignment_to_edit(request.user, pk)
    check_protocol(assignment, protocols.MQM)
    side = request.POST.get("side", protocols.OUTPUT)
    text = marked_text(None, assignment.item, side)
    try:
        start, end = (from_browser_offset(text, int(request.POST.get(name, ""))) for name in ("start", "end"))
    except ValueError:
        return _problem("start and end must be whole numbers")
    try:
        span = mqm_error_create(assignment=assignment, user=request.user, start=start, end=end, side=side,
                                category=request.POST.get("category", ""), severity=request.POST.get("severity", ""),
                                note=request.POST.get("note", ""), ms=clamp_ms(request.POST.get("ms")))
    except AddedSpanError as exc:
        return _problem(str(exc))
    where = " in the source" if span.in_source else ""
    message = (f"{mqm.SEVERITY_LABELS[mqm.severity_of_code(span.severity)]} {span.category} at "
               f"“{span.text[:60]}”{where}.")
    return trigger_client_event(HttpResponse(screen_oob(request, assignment)), "sj:notice", {"message": message})


@own_work(Own.ADDED_SPAN)
@require_POST
def mqm_error_remove(request: AppRequest, span_pk: int) -> HttpResponse:
    span, assignment = added_span_for_user(request.user, span_pk)
    try:
        mqm_error_delete(span=span, assignment=assignment, user=request.user)
    except AddedSpanError as exc:
        return _problem(str(exc))
    return trigger_client_event(HttpResponse(screen_oob(request, assignment)), "sj:notice",
                                {"message": "Deleted the error."})
