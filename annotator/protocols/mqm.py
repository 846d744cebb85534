"""MQM's annotator hooks: the first open pre-fills the machine's spans as errors; the MQM screen shows the item."""

from __future__ import annotations

from annotator.protocols import Hooks, register
from annotator.services.mqm_prefill import mqm_prefill
from annotator.views import mqm as screen
from corpus import protocols


class Mqm(Hooks):
    name = protocols.MQM
    parts = screen.SCREEN_PARTS

    def first_open(self, assignment, user):
        mqm_prefill(assignment=assignment, user=user)

    def context(self, request, assignment):
        return screen.screen_context(request, assignment)

    def page_context(self, request, assignment, context):
        return screen.page_context(request, assignment, context)


HOOKS = register(Mqm())
