"""The phases of one assignment, in order: what the annotator is shown and may do at each step.

One phase model carries every part of a defensible study (DESIGN.md, "A defensible study"):

- ``training``: a qualification item. Judged like any other item; once it is finished the annotator sees
  the answer key beside their own verdicts.
- ``marking``: a control-arm output before the reveal. The annotator marks errors from scratch; no machine
  span, no count of them and no evaluator label reaches the page or the API.
- ``judging``: the machine spans are shown (decoys among them) and judged. On a control-arm output this
  follows the reveal; the marks made while marking stay fixed, later additions count as primed.
- ``scoring``: a protocol that asks for a score after the spans (ESA) closes them here: from now on they are
  fixed, and the item finishes with its score.
- ``done``: the item is finished.

A protocol declares which of these its items go through (corpus.protocols); the one writer
(annotator.services.phases) refuses a move into a phase the campaign's protocol does not have. Undo never reaches
back across a closing move (`closes`): the reveal, or the spans declared done.

Django-free on purpose: model choices, the views, the API and the analytics all derive from here.
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    TRAINING = "training"
    MARKING = "marking"
    JUDGING = "judging"
    SCORING = "scoring"
    DONE = "done"


PHASE_LABELS: dict[Phase, str] = {
    Phase.TRAINING: "Training",
    Phase.MARKING: "Marking errors",
    Phase.JUDGING: "Judging",
    Phase.SCORING: "Scoring",
    Phase.DONE: "Done",
}

# The only moves a phase may make; anything else is refused by the service that tries it.
TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.TRAINING: frozenset({Phase.SCORING, Phase.DONE}),
    Phase.MARKING: frozenset({Phase.JUDGING}),
    Phase.JUDGING: frozenset({Phase.SCORING, Phase.DONE}),
    Phase.SCORING: frozenset({Phase.DONE}),
    Phase.DONE: frozenset({Phase.JUDGING, Phase.TRAINING}),  # an undo that reopens a finished item
}


def initial_phase(*, training: bool = False, unprimed: bool = False) -> Phase:
    """The phase an assignment starts in: qualification items train, control-arm outputs start unprimed."""
    if training and unprimed:
        raise ValueError("a training item is never in the control arm")
    if training:
        return Phase.TRAINING
    return Phase.MARKING if unprimed else Phase.JUDGING


def shows_machine_spans(phase: Phase | str) -> bool:
    """Whether the annotator may receive the machine spans (or anything about them) in this phase."""
    return Phase(phase) is not Phase.MARKING


def can_move(current: Phase | str, target: Phase | str) -> bool:
    return Phase(target) in TRANSITIONS[Phase(current)]


def closes(current: Phase | str, target: Phase | str) -> bool:
    """Whether the move fixes what came before it, so that undo may not reach back across it: the reveal ends
    unprimed marking, and the move into scoring ends the spans."""
    return (Phase(current), Phase(target)) == (Phase.MARKING, Phase.JUDGING) or Phase(target) is Phase.SCORING
