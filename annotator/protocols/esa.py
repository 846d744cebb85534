"""ESA's annotator hooks: the first open makes its row (ESA^AI pre-fills), the spans close when they are done, an
item finishes only with its score, and a pre-filled span keeps its origin when an undo recreates it."""

from __future__ import annotations

from annotator.protocols import Hooks, register
from annotator.selectors.esa import esa_spans_closed, esa_unfinished
from annotator.services.esa import esa_open, esa_prefill_renumber
from annotator.views import esa as screen
from corpus import protocols


class Esa(Hooks):
    name = protocols.ESA
    parts = screen.SCREEN_PARTS

    def first_open(self, assignment, user):
        esa_open(assignment=assignment, user=user)

    def context(self, request, assignment):
        return screen.screen_context(request, assignment)

    def page_context(self, request, assignment, context):
        return screen.page_context(request, assignment, context)

    def unfinished(self, assignment):
        return esa_unfinished(assignment)

    def spans_closed(self, assignment):
        return esa_spans_closed(assignment)

    def span_renumbered(self, assignment, old, new):
        esa_prefill_renumber(assignment=assignment, old=old, new=new)


HOOKS = register(Esa())
