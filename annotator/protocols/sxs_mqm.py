"""Side-by-side MQM's annotator hooks: MQM's screen for the output in focus, with the other output of its comparison
screen beside it (its marks shown, read only) and `x` to switch the focus. Each output keeps MQM's own steps
(corpus.protocols step_applies), so marking, undo and finishing are MQM's; a screen is finished when both are."""

from __future__ import annotations

from django.urls import reverse

from annotator.protocols import register
from annotator.protocols.mqm import Mqm
from annotator.services.units import unit_assignments, unit_for_screen
from annotator.views import mqm as screen
from corpus import protocols


class SxsMqm(Mqm):
    name = protocols.SXS_MQM

    def page_context(self, request, assignment, context):
        extra = super().page_context(request, assignment, context)
        unit = unit_for_screen(assignment, request.GET.get("unit"))
        members = unit_assignments(unit) if unit else [assignment]
        here = next((n for n, a in enumerate(members, start=1) if a.pk == assignment.pk), 1)
        beside = []
        for position, other in enumerate(members, start=1):
            if other.pk == assignment.pk:
                continue
            seen = screen.screen_context(request, other)
            beside.append({"position": position, "item": other.item, "errors": seen["errors"],
                           "done": other.is_done(),
                           "url": f"{reverse('item_screen', args=[other.pk])}?unit={unit.pk}" if unit else ""})
        extra.update(unit=unit, position=here, beside=beside, n_outputs=len(members),
                     switch_url=beside[0]["url"] if beside else "",
                     shortcuts=[*extra["shortcuts"], ("x", "switch to the other output of this screen")])
        return extra


HOOKS = register(SxsMqm())
