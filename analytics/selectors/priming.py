"""The priming figures of a campaign's control arm, gathered from its finished assignments (the engine computes).

Only finished assignments count (their verdicts are final), and never the known-answer control items or
training items. In the control arm an assignment contributes its unprimed marks, the verdicts it gave after
the reveal and its marking time; in the primed arm its verdicts, the errors it added and its whole time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import asdict
from typing import Any

from analytics.formatting import SIMULATED_MARK, display
from annotator.models import Assignment, Campaign, MarkingTime, SpanJudgment, UnprimedMark
from annotator.selectors.campaigns import campaign_run_labels
from annotator.selectors.spans import judged_spans_by_item
from annotator.services.control_arm import work_seconds
from corpus import protocols
from corpus.models import Annotation, AnnotationKind, ErrorSpan
from corpus.protocols.opennlgauge import SPAN_OK
from evaluation.answers import answer_annotation_ids
from quality.selectors.vigilance import excluded_annotator_ids
from stats.priming import RESAMPLES, MachineSpan, PrimingFigures, Work, priming_figures


def has_control_arm(campaign: Campaign) -> bool:
    return campaign.control_arm > 0 or Assignment.objects.filter(campaign=campaign, in_control_arm=True).exists()


def priming_works(campaign: Campaign, *, excluded: Collection[int] = ()) -> tuple[list[Work], list[str]]:
    """The campaign's finished assignments as the engine's Works (the `excluded` annotators' left out), and the
    evaluators (run labels) in order."""
    run_labels = dict(campaign.runs.values_list("pk", "label"))
    neutral = campaign_run_labels(campaign.pk)
    assignments = list(
        Assignment.objects.filter(campaign=campaign, status=Assignment.Status.DONE, is_control=False,
                                  is_training=False).exclude(annotator_id__in=list(excluded)).order_by("pk")
    )
    item_ids = sorted({a.item_id for a in assignments})
    answered: dict[int, set[str]] = defaultdict(set)
    answers = answer_annotation_ids(source_ids=list(run_labels), item_ids=item_ids)
    aspects = [*campaign.aspects, ""] if campaign.aspects else None
    rows = Annotation.objects.filter(pk__in=answers)
    if aspects is not None:
        rows = rows.filter(aspect__in=aspects)
    for item_id, source_id in rows.values_list("item_id", "source_id"):
        answered[item_id].add(run_labels[source_id])
    spans_of = {
        item_id: [(s, run_labels[s.annotation.source_id]) for s, _ in pairs]
        for item_id, pairs in judged_spans_by_item(campaign, item_ids, neutral).items()
    }
    verdicts = {
        (a, s): v for a, s, v in SpanJudgment.objects.filter(assignment__in=[a.pk for a in assignments])
        .values_list("assignment_id", "span_id", "span_verdict")
    }
    marks: dict[int, list[tuple[int | None, int | None]]] = defaultdict(list)
    unprimed_ids: set[int] = set()
    for assignment_id, span_id, start, end in UnprimedMark.objects.filter(
        assignment__campaign=campaign
    ).values_list("assignment_id", "span_id", "span__start", "span__end"):
        marks[assignment_id].append((start, end))
        unprimed_ids.add(span_id)
    added: dict[tuple[int, int], int] = defaultdict(int)
    for pk, item_id, annotator_id in ErrorSpan.objects.filter(
        annotation__kind=AnnotationKind.HUMAN, annotation__source__added__campaign=campaign
    ).values_list("pk", "annotation__item_id", "annotation__source__added__annotator_id"):
        if pk not in unprimed_ids:
            added[(item_id, annotator_id)] += 1
    marking = dict(MarkingTime.objects.filter(assignment__campaign=campaign).values_list("assignment_id", "seconds"))
    works = []
    for a in assignments:
        works.append(Work(
            output=a.item_id, unprimed=a.in_control_arm, evaluators=frozenset(answered[a.item_id]),
            machine=tuple(MachineSpan(label, s.start, s.end, verdicts.get((a.pk, s.pk)) == SPAN_OK)
                          for s, label in spans_of.get(a.item_id, [])),
            marks=tuple(sorted(marks[a.pk], key=_in_text_order)), added=added[(a.item_id, a.annotator_id)],
            seconds=marking.get(a.pk, 0) if a.in_control_arm else work_seconds(a),
        ))
    order = sorted(run_labels.values())
    return works, order


def _in_text_order(mark: tuple[int | None, int | None]) -> tuple[bool, int, int]:
    """Marks by place, unplaced ones (content missing, no offsets) last."""
    return (mark[0] is None, mark[0] or 0, mark[1] or 0)


def priming_report(campaign: Campaign, *, resamples: int = RESAMPLES,
                   exclude_flagged: bool | None = None) -> list[PrimingFigures]:
    """Per evaluator of a campaign with a control arm; [] for a campaign without one, or under a protocol in which
    nobody judges machine spans (ESA compares its arms in its own section: analytics.report.esa). `exclude_flagged`
    as in Scope (None: the campaign's setting)."""
    if not has_control_arm(campaign) or not protocols.get(campaign.protocol).judges_machine_spans:
        return []
    excluded = excluded_annotator_ids(campaign.pk, exclude_flagged=exclude_flagged)
    works, evaluators = priming_works(campaign, excluded=excluded)
    return priming_figures(works, evaluators, resamples=resamples, seed=campaign.seed)


def simulated_labels(campaign: Campaign) -> frozenset[str]:
    """The campaign's runs the simulated server answered, by label (every row naming one says so)."""
    return frozenset(campaign.runs.filter(simulated=True).values_list("label", flat=True))


def priming_dicts(rows: list[PrimingFigures], simulated: Collection[str] = ()) -> list[dict[str, Any]]:
    """The rows as the API and `manage.py priming` give them (the contract's field names), each with
    `simulated`: whether the simulated server answered its evaluator."""
    return [asdict(row) | {"simulated": row.evaluator in simulated} for row in rows]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{display(100 * value, 'pct')}%"


def _num(value: float | None) -> str:
    return display(value, "num")


def _unlocated(n: int) -> str:
    return f"; {n} machine span{'' if n == 1 else 's'} without a location left out" if n else ""


def priming_paragraph(rows: list[PrimingFigures], simulated: Collection[str] = ()) -> str:
    """What the figures say, in plain words (shares printed as the tables print them), and what they do not."""
    if not rows:
        return ""
    parts = []
    for row in rows:
        epo = row.errors_per_output
        name = f"{row.evaluator} {SIMULATED_MARK}" if row.evaluator in simulated else row.evaluator
        parts.append(
            f"{name}: working on their own, the experts marked errors of which the evaluator's spans "
            f"overlap {_pct(row.recall.value)} (n = {row.recall.n} marks); after the reveal they confirmed "
            f"{_pct(row.precision_confirmed.value)} of its spans, though only {_pct(row.precision_found.value)} "
            f"overlap an error they had found themselves; of the spans they had not found, they still accepted "
            f"{_pct(row.accepted_unfound.value)} (n = {row.accepted_unfound.n}"
            f"{_unlocated(row.unlocated)}). With the spans shown an expert "
            f"reported {_num(epo.primed)} errors per output, without them {_num(epo.unprimed)} (difference "
            f"{_num(epo.difference)} over {epo.n_outputs} outputs seen both ways)."
        )
    caveat = (
        "An accepted span that nobody found unprimed is not necessarily a false error: experts working alone "
        "also miss errors, so 'accepted without having been found' bounds the priming effect from above rather "
        "than measuring false acceptances. Recall counts overlap, not agreement on the extent or the category "
        "of an error. Intervals come from resampling outputs; with few outputs they are wide, and outputs in the "
        "control arm were drawn at random, so the figures hold for the campaign's outputs, not for other data."
    )
    return " ".join(parts) + " " + caveat
