"""DA's annotator hooks: the generic score screen (annotator.protocols.scoring) with DA's question and anchors,
and the item's reference beside the source when the campaign shows it."""

from __future__ import annotations

from annotator.protocols import register
from annotator.protocols.scoring import ScoreHooks
from corpus import protocols
from corpus.protocols import da


class Da(ScoreHooks):
    name = protocols.DA
    anchors = da.ANCHORS

    def context(self, request, assignment):
        context = super().context(request, assignment)
        reference = da.shows_reference(assignment.campaign.protocol_options)
        context.update(show_reference=reference, score_question=da.QUESTION_REFERENCE if reference else da.QUESTION)
        return context


HOOKS = register(Da())
