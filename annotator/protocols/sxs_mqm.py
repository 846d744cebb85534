"""Side-by-side MQM's annotator hooks: MQM's screen for the output in focus, with the other output of its comparison
screen beside it (its marks shown, read only) and `x` to switch the focus. Each output keeps MQM's own steps
(corpus.protocols step_applies), so marking, undo and finishing are MQM's; a screen is finished when both are."""

from __future__ import annotations

from annotator.protocols import register
from annotator.protocols.mqm import Mqm
from annotator.protocols.side_by_side import beside_context
from annotator.views import mqm as screen
from corpus import protocols


class SxsMqm(Mqm):
    name = protocols.SXS_MQM

    def page_context(self, request, assignment, context):
        extra = super().page_context(request, assignment, context)
        extra.update(beside_context(request, assignment,
                                    lambda other: screen.screen_context(request, other)["errors"]))
        extra["shortcuts"] = [*extra["shortcuts"], ("x", "switch to the other output of this screen")]
        return extra


HOOKS = register(SxsMqm())
