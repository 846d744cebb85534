"""The fixture protocol's annotator hooks: its screen's parts and context, and what finishing an item needs."""

from __future__ import annotations

from annotator.protocols import Hooks, register
from annotator.selectors.spans import added_spans
from tests.protocolkind.declaration import NAME, SEVERITIES

NAMES = {code: name for name, code in SEVERITIES.items()}


class Tick(Hooks):
    name = NAME
    parts = ("tick-spans", "item-status")

    def context(self, request, assignment):
        spans = added_spans(assignment)
        for span in spans:
            span.severity_name = NAMES.get(span.severity, "")
        return {"assignment": assignment, "campaign": assignment.campaign, "item": assignment.item, "spans": spans}

    def unfinished(self, assignment):
        return None if added_spans(assignment) else "mark at least one slip or blunder first"


HOOKS = register(Tick())
