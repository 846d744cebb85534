"""The reviewers' screen: the campaign's disagreements, every judge's say by name, final verdicts by keyboard."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import retarget

from annotator.access import campaign_for_reviewer
from annotator.engine.occurrences import PICK_NONE, pick_text
from annotator.models import Adjudication, Campaign
from annotator.selectors.review import ADDED, ReviewEntry, review_entry, review_queue
from annotator.services.adjudication import (
    ADDED_SPAN_VERDICTS,
    DECISION_FIELDS,
    AdjudicationError,
    adjudication_history,
    adjudication_redo,
    adjudication_set,
    adjudication_undo,
)
from annotator.services.occurrences import span_occurrences
from annotator.views.common import AppRequest
from corpus.consensus import UNRESOLVED
from corpus.protocols import opennlgauge as protocol
from errors import Conflict

CONTEXT_CHARS = 160
NO_MAJORITY = "no majority"


@dataclass(frozen=True)
class Chip:
    field: str
    value: str
    label: str
    key: str
    pressed: bool

    @property
    def post_vals(self) -> str:
        """The fields the chip posts (its hx-vals): pressing a pressed chip clears the field."""
        return json.dumps({"field": self.field, "value": "" if self.pressed else self.value})


@dataclass
class Card:
    """What one disagreement's card shows."""

    number: int
    entry: ReviewEntry
    excerpt: SafeString
    span_chips: list[Chip]
    explanation_chips: list[Chip]
    rows: list[tuple[str, str, str, str, str]]  # judge, span verdict, explanation verdict, flags, comment
    final_span: str
    final_explanation: str
    final_method: str
    occurrence_chips: list[Chip] = field(default_factory=list)  # an ambiguous span's candidates, then "none"
    final_place: str = ""

    @property
    def dom_id(self) -> str:
        return f"dispute-{self.entry.span.pk}"


@dataclass(frozen=True)
class HistoryRow:
    """One line of a decision's audit trail, verdicts under their labels."""

    at: datetime
    user: str
    action: str
    undone: bool
    field: str
    old: str
    new: str


def _excerpt(output: str, start: int | None, end: int | None) -> SafeString:
    """The output around the span with the span marked; every piece escaped (format_html)."""
    if start is None or end is None:
        return format_html("{}", output[: 2 * CONTEXT_CHARS])
    left = max(0, start - CONTEXT_CHARS)
    right = min(len(output), end + CONTEXT_CHARS)
    return format_html("{}{}<mark class=\"hl\">{}</mark>{}{}", "…" if left else "", output[left:start],
                       output[start:end], output[end:right], "…" if right < len(output) else "")


def _card(number: int, entry: ReviewEntry) -> Card:
    decision = entry.decision
    span_terms = [t for t in protocol.SPAN_VERDICTS if entry.kind != ADDED or t.value in ADDED_SPAN_VERDICTS]
    span_chips = [Chip("span_verdict", t.value, t.label, t.key,
                       bool(decision and decision.span_verdict == t.value)) for t in span_terms]
    explanation_chips = [] if entry.kind == ADDED else [
        Chip("explanation_verdict", t.value, t.label, t.key, bool(decision and decision.explanation_verdict == t.value))
        for t in protocol.EXPLANATION_VERDICTS
    ]
    labels = _labels()
    if entry.kind == ADDED:
        rows = [(v.judge, "marked it" if v.added else "did not mark it", "", "", v.comment) for v in entry.verdicts]
    else:
        rows = [(v.judge, labels.get(v.span_verdict, "—"), labels.get(v.explanation_verdict, "—"),
                 ", ".join([*v.flags, *_picked(v.occurrence, entry.item.output)]), v.comment) for v in entry.verdicts]
    final = entry.consensus
    occurrence_chips, final_place = _occurrence_choice(entry)
    # A field without a majority says so once; the method then says why (not "unresolved (unresolved)").
    method = "a tie: a decision settles it" if final.method == UNRESOLVED else final.method
    return Card(number, entry, _excerpt(entry.item.output, entry.span.start, entry.span.end), span_chips,
                explanation_chips, rows, labels.get(final.span_verdict or "", NO_MAJORITY),
                labels.get(final.explanation_verdict or "", NO_MAJORITY), method, occurrence_chips, final_place)


def _occurrence_choice(entry: ReviewEntry) -> tuple[list[Chip], str]:
    """The places a reviewer can decide for an ambiguous machine span (each candidate, then "none of these"),
    and the place the consensus holds now; nothing for other spans."""
    if entry.kind == ADDED:
        return [], ""
    candidates = span_occurrences(entry.span, entry.item.output)
    if not candidates:
        return [], ""
    decided = entry.decision.occurrence if entry.decision else ""
    chips = [Chip("occurrence", pick_text(c), _place_label(entry.item.output, (c.start, c.end)), "",
                  decided == pick_text(c)) for c in candidates]
    chips.append(Chip("occurrence", PICK_NONE, "none of these", "", decided == PICK_NONE))
    place = entry.consensus.occurrence
    return chips, NO_MAJORITY if place is None else _place_label(entry.item.output, place)


def _place_label(output: str, place: tuple[int | None, int | None]) -> str:
    start, end = place
    if start is None or end is None:
        return "none of these"
    return f"{start}–{end} (“{output[max(0, start - 20):start]}[{output[start:end]}]…”)"


def _picked(place: tuple[int | None, int | None] | None, output: str) -> list[str]:
    """An ambiguous span's place as this judge picked it (picks that differ put the span in the queue)."""
    if place is None:
        return []
    start, end = place
    if start is None or end is None:
        return ["picked: none of the occurrences"]
    return [f"picked the occurrence at {_place_label(output, place)}"]


def _cards(campaign: Campaign) -> list[Card]:
    return [_card(n, e) for n, e in enumerate(review_queue(campaign), start=1)]


def _labels() -> dict[str, str]:
    return {t.value: t.label for t in (*protocol.SPAN_VERDICTS, *protocol.EXPLANATION_VERDICTS)}


def _card_html(request: AppRequest, campaign: Campaign, span_id: int) -> HttpResponse:
    """One card re-rendered from its output's votes alone (the page keeps the number it showed); 204 once
    the span is no longer disputed."""
    entry = review_entry(campaign, span_id)
    if entry is None:  # no longer a disagreement (a judge changed a verdict meanwhile)
        return HttpResponse(status=204)
    html = render_to_string("annotator/adjudicate.html#dispute-card", {"card": _card(0, entry), "campaign": campaign},
                            request=request)
    return HttpResponse(html)


@require_GET
def adjudicate(request: AppRequest, pk: int) -> HttpResponse:
    campaign = campaign_for_reviewer(request.user, pk)
    cards = _cards(campaign)
    keys = {t.key: {"field": g.field, "value": t.value} for g in protocol.GROUPS if g.field for t in g.terms}
    return render(request, "annotator/adjudicate.html", {
        "campaign": campaign, "cards": cards, "key_map": keys,
        "n_decided": sum(c.entry.is_decided for c in cards),
    })


@require_POST
def adjudication_save(request: AppRequest, pk: int, span_pk: int) -> HttpResponse:
    """Refusals are UserErrors, answered by config.middleware with the status the API gives (422, 409)."""
    campaign = campaign_for_reviewer(request.user, pk)
    field = request.POST.get("field", "")
    if field not in DECISION_FIELDS:
        raise AdjudicationError(f"field: {field!r} is not one of {', '.join(DECISION_FIELDS)}", field="field")
    adjudication_set(campaign=campaign, span_id=span_pk, user=request.user,
                     changes={field: request.POST.get("value", "")})
    return _card_html(request, campaign, span_pk)


@require_POST
def adjudication_undo_view(request: AppRequest, pk: int) -> HttpResponse:
    campaign = campaign_for_reviewer(request.user, pk)
    decision = adjudication_undo(campaign=campaign, user=request.user)
    if decision is None:
        raise Conflict("Nothing to undo.")
    return _stepped_card(request, campaign, decision.span_id)


@require_POST
def adjudication_redo_view(request: AppRequest, pk: int) -> HttpResponse:
    campaign = campaign_for_reviewer(request.user, pk)
    decision = adjudication_redo(campaign=campaign, user=request.user)
    if decision is None:
        raise Conflict("Nothing to redo.")
    return _stepped_card(request, campaign, decision.span_id)


def _stepped_card(request: AppRequest, campaign: Campaign, span_id: int) -> HttpResponse:
    """The card an undo or redo changed, aimed at that card: the page's undo button does not know which."""
    return retarget(_card_html(request, campaign, span_id), f"#dispute-{span_id}")


@require_GET
def adjudication_history_view(request: AppRequest, pk: int, span_pk: int) -> HttpResponse:
    """A card's audit trail, loaded when the reviewer opens its History (the twin of list_dispute_history)."""
    campaign = campaign_for_reviewer(request.user, pk)
    decision = get_object_or_404(Adjudication, campaign=campaign, span_id=span_pk)
    labels = _labels()
    rows = [HistoryRow(e.at, e.user.username, e.get_action_display(), e.undone, e.field.replace("_", " "),
                       labels.get(e.old_value, e.old_value), labels.get(e.new_value, e.new_value))
            for e in adjudication_history(decision)]
    return render(request, "annotator/adjudicate.html#dispute-history", {"span_id": span_pk, "rows": rows})
