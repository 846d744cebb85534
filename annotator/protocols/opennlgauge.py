"""OpeNLGauge's annotator hooks: verdicts on the machine's error spans, on the shared item screen."""

from __future__ import annotations

from annotator import checks
from annotator.protocols import Hooks, register
from annotator.rendering import render_inputs
from annotator.selectors.campaigns import neighbour_assignments
from annotator.views import work
from corpus import protocols
from corpus.protocols import opennlgauge as protocol


class OpeNLGauge(Hooks):
    name = protocols.OPENNLGAUGE
    parts = work.SCREEN_PARTS

    def context(self, request, assignment):
        return work.screen_context(request, assignment)

    def page_context(self, request, assignment, context):
        extra = {}
        if assignment.is_training and assignment.is_done():
            extra["training_key"] = checks.installed().training_key(assignment, context["rows"])
        prev_pk, next_pk, n_assignments = neighbour_assignments(assignment)
        extra.update({
            "inputs": render_inputs(assignment.item.inputs), "prev_pk": prev_pk, "next_pk": next_pk,
            "n_assignments": n_assignments, "shortcuts": work.SHORTCUTS, "key_map": protocol.key_map(),
            "sync_parts": self.parts,
        })
        return extra


HOOKS = register(OpeNLGauge())
