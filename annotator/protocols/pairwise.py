"""Pairwise preference's annotator hooks: the screen of a comparison unit (its outputs side by side, the input
above them), the choice part, and what finishing an output needs (every unit holding it finished)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse

from annotator.models import Campaign
from annotator.protocols import Hooks, register
from annotator.rendering import render_inputs
from annotator.services.units import (
    neighbour_units,
    unit_assignments,
    unit_for_screen,
    unit_open,
    unit_spans,
    units_of,
)
from corpus import protocols
from corpus.protocols import pairwise

SIDES = ("left", "right")


def unit_url(unit) -> str:
    first = unit_assignments(unit)[0]
    return f"{reverse('item_screen', args=[first.pk])}?unit={unit.pk}"


class Pairwise(Hooks):
    name = protocols.PAIRWISE
    parts = ("unit-choice", "item-status", "unit-outputs")

    def shortcuts(self) -> tuple[tuple[str, str], ...]:
        return (
            *((key, what) for key, what in pairwise.KEYS.items()),
            *((key, what) for key, what in pairwise.SPAN_KEYS.items()),
            ("u / Ctrl+Z", "undo my last change; Shift+U / Ctrl+Y redo"),
            ("f", "finish this screen and open the next one (after the choice)"),
            ("n / p", "next / previous screen"), ("g", "guidelines"), ("?", "this list"),
        )

    def _unit(self, request, assignment):
        asked = request.GET.get("unit") or request.POST.get("unit")
        return unit_for_screen(assignment, asked)

    def context(self, request, assignment):
        campaign = assignment.campaign
        unit = self._unit(request, assignment)
        members = unit_assignments(unit) if unit else [assignment]
        can_edit = (assignment.annotator_id == request.user.pk and campaign.status == Campaign.Status.OPEN)
        options = campaign.protocol_options
        spans = unit_spans(unit) if unit else {}
        outputs = [{"position": n, "item": a.item, "assignment": a, "side": SIDES[n - 1] if len(members) == 2 else "",
                    "spans": spans.get(a.pk, [])} for n, a in enumerate(members, start=1)]
        return {
            "assignment": assignment, "campaign": campaign, "item": assignment.item, "unit": unit,
            "outputs": outputs, "can_edit": can_edit,
            "choice_open": can_edit and unit is not None and unit.finished_at is None,
            "question": pairwise.question(options), "reason_required": pairwise.reason_required(options),
            "tie": pairwise.TIE, "output_header": assignment.item.dataset.output_header or "Output",
            "reason_max": pairwise.REASON_MAX,
        }

    def page(self, request, assignment) -> HttpResponse:
        context = self.context(request, assignment)
        unit = context["unit"]
        if unit is not None and context["can_edit"]:
            unit_open(unit)  # the first time its judge sees it (the export's opened_at)
        prev, nxt, n_units = neighbour_units(unit) if unit else (None, None, 0)
        first = context["outputs"][0]["assignment"]
        context.update(
            inputs=render_inputs(first.item.inputs), anchor=first, n_units=n_units,
            prev_url=unit_url(prev) if prev else "", next_url=unit_url(nxt) if nxt else "",
            shortcuts=self.shortcuts(), sync_parts=self.parts,
        )
        return render(request, self.declared.template, context)

    def unfinished(self, assignment):
        left = units_of(assignment).filter(finished_at__isnull=True).order_by("number").first()
        if left is not None:
            return f"screen {left.number} that shows this output is not finished yet"
        return None


HOOKS = register(Pairwise())
