"""What a pilot (or a finished campaign) tells a plan: active time, and each evaluator's verdicts per output.

Only finished real work counts: done assignments that are neither training items nor planted outputs, by
annotators the campaign does not leave out. Time is Assignment.active_seconds (idle gaps capped); the spans
it bought are every machine span judged on those assignments (decoys included: they took the time too). The
verdicts are complete judgments of the runs' spans, one (OK, judged) row per output and judge, as Table 4
counts them. The plan itself is stats.planning's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Q, Sum

from annotator import checks
from annotator.models import Assignment, Campaign, SpanJudgment
from corpus.models import SourceKind
from corpus.protocols.opennlgauge import EXPLANATION_VERDICT_VALUES, SPAN_OK, SPAN_VERDICT_VALUES
from stats.planning import StudyPlan, study_plan


@dataclass
class Pilot:
    active_seconds: float
    outputs: int  # finished assignments
    spans: int  # machine-span judgments on them
    evaluators: dict[str, dict[int, np.ndarray]]  # run label -> item id -> (judges, 2) rows of (OK, judged)


def _finished(campaign: Campaign):
    excluded = checks.installed().excluded_annotator_ids(campaign.pk)
    return Assignment.objects.filter(campaign=campaign, status=Assignment.Status.DONE, is_training=False,
                                     item__derived_from__isnull=True).exclude(annotator_id__in=excluded)


def pilot_data(campaign: Campaign) -> Pilot:
    finished = _finished(campaign)
    totals = finished.aggregate(seconds=Sum("active_seconds"), outputs=Count("id"))
    complete = Q(span_verdict__in=SPAN_VERDICT_VALUES, explanation_verdict__in=EXPLANATION_VERDICT_VALUES)
    judgments = SpanJudgment.objects.filter(complete, assignment__in=finished)
    labels = dict(campaign.runs.values_list("pk", "label"))
    rows = (judgments.exclude(span__annotation__source__kind=SourceKind.CHECK)
            .values_list("span__annotation__source_id", "assignment__item_id", "annotator_id")
            .annotate(ok=Count("id", filter=Q(span_verdict=SPAN_OK)), judged=Count("id")).order_by())
    cells: dict[str, dict[int, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
    for run_id, item_id, _, ok, judged in rows:
        if run_id in labels:
            cells[labels[run_id]][item_id].append((ok, judged))
    evaluators = {label: {i: np.array(by_item[i], dtype=float) for i in sorted(by_item)}
                  for label, by_item in sorted(cells.items())}
    for label in sorted(labels.values()):
        evaluators.setdefault(label, {})
    return Pilot(active_seconds=float(totals["seconds"] or 0.0), outputs=totals["outputs"],
                 spans=judgments.count(), evaluators=evaluators)


def campaign_plan(campaign: Campaign, *, outputs: int, judges: int, difference: float | None = None,
                  seed: int = 0) -> StudyPlan:
    """The plan for `outputs` outputs x `judges` judges, from this campaign as the pilot."""
    pilot = pilot_data(campaign)
    return study_plan(pilot.evaluators, active_seconds=pilot.active_seconds, pilot_outputs=pilot.outputs,
                      pilot_spans=pilot.spans, outputs=outputs, judges=judges, difference=difference, seed=seed)
