"""Read-side queries about the spans an assignment shows: machine spans, decoys, added spans, handles."""


from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from hashlib import sha256

from django.conf import settings
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery

from accounts.access import AccessError
from annotator import checks
from annotator.engine.phases import shows_machine_spans
from annotator.models import Assignment, Campaign, CampaignRun, SpanJudgment, UnprimedMark
from annotator.rendering import SpanRef, group_spans
from corpus import protocols
from corpus.models import AnnotationKind, ErrorSpan, SourceKind
from corpus.protocols.opennlgauge import SPAN_OK, SPAN_VERDICT_VALUES
from evaluation.answers import RUN_ANSWER_KINDS, answer_annotation_ids


def campaign_run_labels(campaign_id: int) -> dict[int, str]:
    return dict(CampaignRun.objects.filter(campaign_id=campaign_id).values_list("run_id", "label"))


@dataclass
class ErrorRow:
    """One machine error as the annotator sees it: the span, its neutral label, and their own judgment."""

    span: ErrorSpan
    label: str
    number: int
    judgment: SpanJudgment | None = None
    style: int = 0  # which colour/underline style the screen gives this row's neutral label
    handle: int = 0  # what the annotator's page and API call this span (span_handle), never its database id

    @property
    def has_offsets(self) -> bool:
        return self.span.start is not None

    @property
    def is_complete(self) -> bool:
        return self.judgment is not None and self.judgment.is_complete()


@dataclass
class ErrorGroup:
    """Errors of one or more evaluators that mark the same place in the output."""

    rows: list[ErrorRow]
    start: int | None
    end: int | None
    text: str

    @property
    def dom_id(self) -> str:
        return f"place-{self.rows[0].handle}"


HANDLE_BASE = 2**44
"""Handles lie in [2**44, 2**44 + 2**40): above any database id, below JavaScript's largest exact integer."""


def span_handle(assignment_id: int, span_id: int) -> int:
    """The opaque number an annotator's page and API use for a span on one assignment.

    Database ids would tell a decoy apart (made after the runs' spans, so larger); a keyed hash of
    (assignment, span) says nothing about when or how the span was made, and differs between assignments."""
    digest = hmac.new(settings.SECRET_KEY.encode(), f"span:{assignment_id}:{span_id}".encode(), sha256).digest()
    return HANDLE_BASE + int.from_bytes(digest[:5], "big")


def _aspect_filter(campaign: Campaign) -> Q:
    """The campaign's aspects and, in a sampled campaign, only the machine spans drawn into its sample."""
    sampled = Q(sampled_in__design__campaign_id=campaign.pk) if campaign.is_sampled else Q()
    if not campaign.aspects:
        return sampled
    return sampled & Q(annotation__aspect__in=[*campaign.aspects, ""])


def judged_spans(
    assignment: Assignment, labels: dict[int, str] | None = None, *, with_checks: bool = True
) -> list[tuple[ErrorSpan, str]]:
    """Return the machine spans the annotator judges on this assignment, with their neutral labels, in screen
    order (by label, then the evaluator's own order). Only spans of each run's answer annotation count
    (evaluation.answers decides, per run, item and aspect, on annotations): a merged answer without spans
    leaves nothing to judge, never the per-model lists behind it. With `with_checks`, the campaign's decoys on
    this output and, on a planted output, the machine spans copied onto it join them under their labels."""
    labels = campaign_run_labels(assignment.campaign_id) if labels is None else labels
    pairs = judged_spans_by_item(assignment.campaign, [assignment.item_id], labels).get(assignment.item_id, [])
    if with_checks:
        pairs += checks.installed().hidden_spans(assignment)
    pairs.sort(key=lambda p: (p[1], p[0].annotation.aspect, p[0].position, p[0].start or 0, p[0].pk))
    return pairs


def judged_spans_by_item(campaign: Campaign, item_ids: list[int],
                         labels: dict[int, str]) -> dict[int, list[tuple[ErrorSpan, str]]]:
    """judged_spans for many items of a campaign in one pass (the analytics read whole campaigns)."""
    answers = answer_annotation_ids(source_ids=list(labels), item_ids=item_ids)
    spans = list(
        ErrorSpan.objects.filter(_aspect_filter(campaign), annotation_id__in=sorted(answers))
        .select_related("annotation").order_by("annotation_id", "position", "pk")
    )
    spans.sort(key=lambda s: (labels[s.annotation.source_id], s.annotation.aspect, s.position, s.pk))
    by_item: dict[int, list[tuple[ErrorSpan, str]]] = {}
    for s in spans:
        by_item.setdefault(s.annotation.item_id, []).append((s, labels[s.annotation.source_id]))
    return by_item


def judged_span_by_handle(assignment: Assignment, handle: int) -> tuple[ErrorSpan, str]:
    """Return the span the annotator's page calls `handle` on this assignment, with its neutral label; a 404
    AccessError for any other number (a database id included). Two queries whatever the span is: the item's
    judged run spans (the handle is matched among them), then the answer check or the checks' hidden spans."""
    if not shows_machine_spans(assignment.phase):
        raise AccessError.not_found("No such error on this item.")
    row = next((s for s in _run_spans(assignment) if span_handle(assignment.pk, s.pk) == handle), None)
    return _judged(assignment, row, lambda: [
        pair for pair in checks.installed().hidden_spans(assignment) if span_handle(assignment.pk, pair[0].pk) == handle
    ])


def judged_span_for_assignment(assignment: Assignment, span_pk: int) -> tuple[ErrorSpan, str]:
    """Return one span the assignment judges, with its neutral label; raise a 404 AccessError for any other
    span (the same decision as judged_spans, so every verdict endpoint and the screen agree). While the
    expert is marking unprimed, every machine span is "no such error": not even its existence is told."""
    if not shows_machine_spans(assignment.phase):
        raise AccessError.not_found("No such error on this item.")
    row = _run_spans(assignment).filter(pk=span_pk).first()
    return _judged(assignment, row, lambda: checks.installed().hidden_spans(assignment, span_pk))


def _run_spans(assignment: Assignment) -> QuerySet[ErrorSpan]:
    """The machine spans of the campaign's runs on the assignment's item, each with the run's neutral label."""
    # A run is its annotations' source, so the campaign's label of the run is found by the annotation's
    # source id alone (no join through the source and run tables).
    label = CampaignRun.objects.filter(campaign_id=assignment.campaign_id, run_id=OuterRef("annotation__source_id"))
    return (
        ErrorSpan.objects.filter(
            _aspect_filter(assignment.campaign),
            annotation__item_id=assignment.item_id,
            annotation__kind__in=RUN_ANSWER_KINDS,
        )
        .annotate(neutral_label=Subquery(label.values("label")[:1]))
        .filter(neutral_label__isnull=False)
        .select_related("annotation")
        .only("pk", "annotation_id", "position", "text", "start", "end", "match", "multi_part", "ambiguous",
              "explanation", "severity", "category", "annotation__kind", "annotation__source_id",
              "annotation__aspect", "annotation__item_id")
    )


def _judged(assignment: Assignment, row: ErrorSpan | None,
            hidden: Callable[[], list[tuple[ErrorSpan, str]]]) -> tuple[ErrorSpan, str]:
    # One second query either way - the answer check of a run's span, or the checks' lookup of a decoy or a copy
    # on a planted output - so a save costs the same queries whatever the span is (no timing tell; a test counts).
    if row is None or row.annotation_id not in answer_annotation_ids(
        source_ids=[row.annotation.source_id], item_ids=[assignment.item_id]
    ):
        found = hidden()  # a decoy, or a copy on a planted output
        if found:
            return found[0]
        raise AccessError.not_found("No such error on this item.")
    return row, row.neutral_label


def error_rows(assignment: Assignment) -> list[ErrorRow]:
    """The machine errors the assignee sees: none at all while they mark errors unprimed (annotator.engine.phases),
    nor under a protocol in which annotators mark errors themselves (MQM: machine spans only pre-fill)."""
    if not shows_machine_spans(assignment.phase):
        return []
    if not protocols.get(assignment.campaign.protocol).judges_machine_spans:
        return []
    pairs = judged_spans(assignment)
    judgments = {
        j.span_id: j
        for j in SpanJudgment.objects.filter(assignment_id=assignment.pk, span_id__in=[s.pk for s, _ in pairs])
    }
    return [
        ErrorRow(span=s, label=label, number=n, judgment=judgments.get(s.pk), handle=span_handle(assignment.pk, s.pk))
        for n, (s, label) in enumerate(pairs, start=1)
    ]


def item_errors(assignment: Assignment) -> tuple[list[ErrorRow], list[ErrorGroup]]:
    """Return the rows numbered in reading order (places in text order, spans without offsets last) and the
    groups they form."""
    groups = error_groups(error_rows(assignment), assignment.item.output)
    rows = [row for group in groups for row in group.rows]
    for number, row in enumerate(rows, start=1):
        row.number = number
    return rows, groups


def error_groups(rows: list[ErrorRow], output: str) -> list[ErrorGroup]:
    """Group rows that mark the same place (spans with offsets) or quote the same missing text (no offsets)."""
    with_offsets = [r for r in rows if r.has_offsets]
    by_id = {r.span.pk: r for r in rows}
    groups = []
    for ids in group_spans([SpanRef(r.span.pk, r.span.start, r.span.end) for r in with_offsets]):
        # Within a place, cards follow the text too (then the label), so numbers read left to right.
        members = sorted((by_id[i] for i in ids), key=lambda r: (r.span.start, r.span.end, r.label))
        start = min(r.span.start for r in members)
        end = max(r.span.end for r in members)
        groups.append(ErrorGroup(rows=members, start=start, end=end, text=output[start:end]))
    loose: dict[str, list[ErrorRow]] = {}
    for r in rows:
        if not r.has_offsets:
            loose.setdefault(" ".join(r.span.text.split()).casefold(), []).append(r)
    groups += [ErrorGroup(rows=members, start=None, end=None, text=members[0].span.text) for members in loose.values()]
    return groups


def added_spans(assignment: Assignment) -> list[ErrorSpan]:
    """The errors the assignee added to this item in this campaign (their campaign source's spans)."""
    return list(
        ErrorSpan.objects.filter(
            annotation__item_id=assignment.item_id, annotation__kind=AnnotationKind.HUMAN,
            annotation__source__added__campaign_id=assignment.campaign_id,
            annotation__source__added__annotator_id=assignment.annotator_id,
        ).select_related("annotation").order_by("start", "pk")
    )


def unprimed_span_ids(assignment: Assignment) -> set[int]:
    """The assignee's errors on this item that were marked before the reveal (control arm only)."""
    if not assignment.in_control_arm:
        return set()
    return set(UnprimedMark.objects.filter(assignment_id=assignment.pk).values_list("span_id", flat=True))


def spans_experts_confirm(campaign_id: int | None, items: QuerySet) -> QuerySet[ErrorSpan]:
    """Spans with offsets, on `items` (a values("item_id") query), that a strict majority of the campaign's
    experts who gave a span verdict marked Error: the humans' reference includes them beside the errors
    they added themselves."""
    in_campaign = Q(judgments__assignment__campaign_id=campaign_id)
    return (
        ErrorSpan.objects.filter(start__isnull=False, annotation__item_id__in=items)
        .exclude(annotation__source__kind=SourceKind.CHECK)  # decoys are known answers, never a reference
        .annotate(
            judges=Count("judgments", filter=in_campaign & Q(judgments__span_verdict__in=SPAN_VERDICT_VALUES)),
            errors=Count("judgments", filter=in_campaign & Q(judgments__span_verdict=SPAN_OK)),
        )
        .filter(judges__lt=F("errors") * 2)
    )
