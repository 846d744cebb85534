"""What a comparing protocol's per-output screen adds (side-by-side MQM, contrastive ESA): the screen's other outputs
beside the one in focus, read only, with what the judge marked on them, and the link that moves the focus on.
Used by those protocols' hooks; registers nothing itself."""

from __future__ import annotations

from collections.abc import Callable

from django.urls import reverse

from annotator.services.units import unit_assignments, unit_for_screen


def beside_context(request, assignment, marks: Callable[[object], list]) -> dict:
    """`unit`, the focused output's `position` of `n_outputs`, the other outputs (`beside`: position, item, their
    marks as `marks(assignment)` lists them, done, url) and `switch_url` (the next output, wrapping around)."""
    unit = unit_for_screen(assignment, request.GET.get("unit"))
    members = unit_assignments(unit) if unit else [assignment]
    here = next((n for n, a in enumerate(members, start=1) if a.pk == assignment.pk), 1)
    beside = []
    for position, other in enumerate(members, start=1):
        if other.pk == assignment.pk:
            continue
        beside.append({"position": position, "item": other.item, "marks": marks(other), "done": other.is_done(),
                       "url": f"{reverse('item_screen', args=[other.pk])}?unit={unit.pk}" if unit else ""})
    following = next((b for b in beside if b["position"] > here), beside[0] if beside else None)
    return {"unit": unit, "position": here, "beside": beside, "n_outputs": len(members),
            "switch_url": following["url"] if following else ""}
