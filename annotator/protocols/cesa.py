"""Contrastive ESA's annotator hooks: ESA's screen for the output in focus, with the screen's other outputs of the
same input stacked beside it (their spans and scores shown, read only) and `c` to move the focus on. Each output
keeps ESA's own steps and phases (spans, spans done, its 0-100 score; ESA^AI's pre-fill outside the control arm),
so a screen is finished when all its outputs are."""

from __future__ import annotations

from annotator.protocols import register
from annotator.protocols.esa import Esa
from annotator.protocols.side_by_side import beside_context
from annotator.views import esa as screen
from corpus import protocols


class Cesa(Esa):
    name = protocols.CESA

    def page_context(self, request, assignment, context):
        extra = super().page_context(request, assignment, context)

        def marks(other):
            seen = screen.screen_context(request, other)
            return {"spans": seen["spans"], "score": seen["score"]}

        extra.update(beside_context(request, assignment, marks))
        extra["shortcuts"] = [*extra["shortcuts"], ("c", "move the focus to the next output of this screen")]
        return extra


HOOKS = register(Cesa())
