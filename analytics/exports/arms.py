"""The control arm in the labeled set: each error's arm, and whether a machine span had been found unprimed.

Arms, per error:
- ``unprimed``: an error an expert marked on a control-arm output before its machine spans were shown;
- ``revealed``: an error an expert added on a control-arm output after the reveal; a machine span on an output
  that at least one expert first marked unprimed (it was judged after that expert's own marking);
- ``primed``: everything on outputs whose experts saw the machine spans from the start.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from analytics.selectors.priming import (
    has_control_arm,
    priming_dicts,
    priming_paragraph,
    priming_report,
    simulated_labels,
)
from annotator.models import Assignment, Campaign, UnprimedMark
from corpus.models import ErrorSpan
from stats.overlap import shared_chars

PRIMED, UNPRIMED, REVEALED = "primed", "unprimed", "revealed"


@dataclass
class CampaignArms:
    control: dict[int, set[int]] = field(default_factory=dict)  # item -> annotators who marked it unprimed
    unprimed_ids: set[int] = field(default_factory=set)
    # item -> unprimed marks of all experts (an unplaced one, content missing, has no offsets)
    marks: dict[int, list[tuple[int | None, int | None]]] = field(default_factory=dict)

    def added_arm(self, span: ErrorSpan) -> str:
        if span.pk in self.unprimed_ids:
            return UNPRIMED
        annotator = span.annotation.source.added.annotator_id
        return REVEALED if annotator in self.control.get(span.annotation.item_id, set()) else PRIMED

    def machine_arm(self, item_id: int) -> str:
        return REVEALED if self.control.get(item_id) else PRIMED

    def found_unprimed(self, span: ErrorSpan, item_id: int) -> bool | None:
        """On a control-arm output: whether an unprimed mark overlaps the machine span; None elsewhere."""
        if not self.control.get(item_id):
            return None
        if span.start is None or span.end is None:
            return False
        return any(shared_chars((span.start, span.end), mark) for mark in self.marks.get(item_id, []))


def campaign_arms(campaign: Campaign) -> CampaignArms:
    arms = CampaignArms()
    control: dict[int, set[int]] = defaultdict(set)
    for item_id, annotator_id in Assignment.objects.filter(campaign=campaign, in_control_arm=True).values_list(
        "item_id", "annotator_id"
    ):
        control[item_id].add(annotator_id)
    arms.control = dict(control)
    marks: dict[int, list[tuple[int | None, int | None]]] = defaultdict(list)
    for span_id, item_id, start, end in UnprimedMark.objects.filter(assignment__campaign=campaign).values_list(
        "span_id", "assignment__item_id", "span__start", "span__end"
    ):
        arms.unprimed_ids.add(span_id)
        marks[item_id].append((start, end))
    arms.marks = dict(marks)
    return arms


DESIGN = (
    "Control arm (crossed): a seeded share of the outputs is first shown to half of its annotators (at least one) "
    "without the machine's spans; they mark every error from scratch, press Done marking, and then judge the "
    "machine's spans as usual. The other annotators of the output see the spans from the start. Outputs are drawn "
    "within strata of the evaluators that annotated them, and the unprimed roles are balanced over annotators. "
    "Sources: ESA vs ESA^AI (Zouhar, Kocmi et al., NAACL 2025, arXiv 2406.12419); priming by suggestions "
    "(Schroeder, Roy & Kabbara 2025, arXiv 2507.15821)."
)


def control_arm_card(campaign: Campaign, *, exclude_flagged: bool | None = None) -> dict[str, Any] | None:
    """The design and the estimates for the data card; None for a campaign without a control arm."""
    if not has_control_arm(campaign):
        return None
    in_arm = Assignment.objects.filter(campaign=campaign, in_control_arm=True)
    rows = priming_report(campaign, exclude_flagged=exclude_flagged)
    simulated = simulated_labels(campaign)
    return {
        "share": campaign.control_arm, "seed": campaign.seed, "design": DESIGN,
        "outputs_in_arm": in_arm.values("item_id").distinct().count(),
        "unprimed_assignments": in_arm.count(),
        "revealed_assignments": in_arm.filter(revealed_at__isnull=False).count(),
        "estimates": priming_dicts(rows, simulated), "reading": priming_paragraph(rows, simulated),
        "arms": {PRIMED: "shown with the machine's spans from the start",
                 UNPRIMED: "marked before the machine's spans were shown",
                 REVEALED: "on a control-arm output after the reveal (machine spans: judged after the expert's "
                           "own marking)"},
    }
