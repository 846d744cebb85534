"""Read-side queries of the annotation app that cross relations or aggregate."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from hashlib import sha256

from django.conf import settings
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery, Sum

from accounts.access import AccessError
from accounts.models import User
from annotator.models import Assignment, Campaign, CampaignRun, CheckSpan, ControlVerdict, SpanJudgment, UnprimedMark
from annotator.phases import shows_machine_spans
from annotator.rendering import SpanRef, group_spans
from corpus.models import AnnotationKind, Dataset, ErrorSpan, SourceKind
from corpus.protocol import SPAN_OK, SPAN_VERDICT_VALUES
from errors import UserError
from evaluation.answers import RUN_ANSWER_KINDS, answer_annotation_ids


def datasets_for_home() -> QuerySet[Dataset]:
    return Dataset.objects.select_related("task").annotate(
        n_items=Count("items", filter=Q(items__derived_from__isnull=True), distinct=True)
    ).order_by("name")


def campaigns_visible_to(user: User) -> QuerySet[Campaign]:
    campaigns = Campaign.objects.select_related("dataset")
    if not user.sees_everything:
        campaigns = campaigns.filter(assignments__annotator=user).distinct()
    return campaigns.annotate(
        n_assignments=Count("assignments", filter=Q(assignments__annotator=user) if not user.sees_everything else None),
        n_done=Count(
            "assignments",
            filter=Q(assignments__status=Assignment.Status.DONE)
            & (Q(assignments__annotator=user) if not user.sees_everything else Q()),
        ),
    )


# ---- campaigns, assignments and the item screen --------------------------------------------------------------

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


def campaign_run_labels(campaign_id: int) -> dict[int, str]:
    return dict(CampaignRun.objects.filter(campaign_id=campaign_id).values_list("run_id", "label"))


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
        pairs += [(c.span, c.campaign_run.label) for c in _check_spans(assignment)]
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


def _check_spans(assignment: Assignment, span_pk: int | None = None) -> list[CheckSpan]:
    rows = CheckSpan.objects.filter(campaign_id=assignment.campaign_id, span__annotation__item_id=assignment.item_id)
    if assignment.campaign.aspects:
        rows = rows.filter(span__annotation__aspect__in=[*assignment.campaign.aspects, ""])
    if span_pk is not None:
        rows = rows.filter(span_id=span_pk)
    return list(rows.select_related("span__annotation", "campaign_run"))


def judged_span_by_handle(assignment: Assignment, handle: int) -> tuple[ErrorSpan, str]:
    """Return the span the annotator's page calls `handle` on this assignment, with its neutral label; a 404
    AccessError for any other number (a database id included)."""
    candidates = ErrorSpan.objects.filter(annotation__item_id=assignment.item_id).values_list("pk", flat=True)
    span_pk = next((pk for pk in candidates if span_handle(assignment.pk, pk) == handle), None)
    if span_pk is None:
        raise AccessError.not_found("No such error on this item.")
    return judged_span_for_assignment(assignment, span_pk)


def judged_span_for_assignment(assignment: Assignment, span_pk: int) -> tuple[ErrorSpan, str]:
    """Return one span the assignment judges, with its neutral label; raise a 404 AccessError for any other
    span (the same decision as judged_spans, so every verdict endpoint and the screen agree). While the
    expert is marking unprimed, every machine span is "no such error": not even its existence is told."""
    if not shows_machine_spans(assignment.phase):
        raise AccessError.not_found("No such error on this item.")
    # A run is its annotations' source, so the campaign's label of the run is found by the annotation's
    # source id alone (no join through the source and run tables).
    label = CampaignRun.objects.filter(campaign_id=assignment.campaign_id, run_id=OuterRef("annotation__source_id"))
    row = (
        ErrorSpan.objects.filter(
            _aspect_filter(assignment.campaign),
            pk=span_pk,
            annotation__item_id=assignment.item_id,
            annotation__kind__in=RUN_ANSWER_KINDS,
        )
        .annotate(neutral_label=Subquery(label.values("label")[:1]))
        .filter(neutral_label__isnull=False)
        .select_related("annotation")
        .only("pk", "annotation_id", "position", "text", "start", "end", "match", "multi_part", "ambiguous",
              "explanation", "severity", "category", "annotation__kind", "annotation__source_id",
              "annotation__aspect", "annotation__item_id")
        .first()
    )
    if row is None or row.annotation_id not in answer_annotation_ids(
        source_ids=[row.annotation.source_id], item_ids=[assignment.item_id]
    ):
        checks = _check_spans(assignment, span_pk)  # a decoy, or a machine span copied onto a planted output
        if checks:
            return checks[0].span, checks[0].campaign_run.label
        raise AccessError.not_found("No such error on this item.")
    return row, row.neutral_label


def error_rows(assignment: Assignment) -> list[ErrorRow]:
    """The machine errors the assignee sees: none at all while they mark errors unprimed (annotator.phases)."""
    if not shows_machine_spans(assignment.phase):
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


@dataclass
class AnnotatorProgress:
    """One annotator's progress in a campaign: the row of the campaign page's progress table."""

    annotator: str
    total: int
    done: int
    in_progress: int
    seconds: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def campaign_progress(campaign: Campaign) -> list[AnnotatorProgress]:
    """Per annotator (one row each, by name): assigned items, finished, started, and working time."""
    rows = (
        Assignment.objects.filter(campaign=campaign).values("annotator__username").order_by("annotator__username")
        .annotate(total=Count("id"), done=Count("id", filter=Q(status=Assignment.Status.DONE)),
                  in_progress=Count("id", filter=Q(status=Assignment.Status.IN_PROGRESS)),
                  seconds=Sum("seconds_spent"))
    )
    return [AnnotatorProgress(r["annotator__username"], r["total"], r["done"], r["in_progress"], r["seconds"] or 0)
            for r in rows]


@dataclass
class QueueSummary:
    total: int
    done: int
    seconds: int
    resume: Assignment | None

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def queue_for(campaign: Campaign, user: User) -> tuple[list[Assignment], QueueSummary]:
    """The annotator's own assignments in their shuffled order, and where to resume (first unfinished,
    preferring the one they were working on)."""
    rows = list(
        Assignment.objects.filter(campaign=campaign, annotator=user).only(
            "pk", "order", "status", "seconds_spent", "started_at", "finished_at", "campaign_id", "item_id"
        ).order_by("order")
    )
    resume = next((a for a in rows if a.status == Assignment.Status.IN_PROGRESS), None) or next(
        (a for a in rows if a.status == Assignment.Status.TODO), None
    )
    summary = QueueSummary(
        total=len(rows), done=sum(a.status == Assignment.Status.DONE for a in rows),
        seconds=sum(a.seconds_spent for a in rows), resume=resume,
    )
    return rows, summary


def neighbour_assignments(assignment: Assignment) -> tuple[int | None, int | None, int]:
    """Return the pks of the annotator's previous and next assignment in their order, and how many they have
    in this campaign (one query over (pk, order) pairs)."""
    orders = list(
        Assignment.objects.filter(campaign_id=assignment.campaign_id, annotator_id=assignment.annotator_id)
        .order_by("order").values_list("pk", "order")
    )
    before = [pk for pk, order in orders if order < assignment.order]
    after = [pk for pk, order in orders if order > assignment.order]
    return (before[-1] if before else None), (after[0] if after else None), len(orders)


def next_open_assignment(assignment: Assignment) -> int | None:
    """The next unfinished assignment after this one in the annotator's order, wrapping around."""
    siblings = Assignment.objects.filter(
        campaign_id=assignment.campaign_id, annotator_id=assignment.annotator_id
    ).exclude(status=Assignment.Status.DONE).exclude(pk=assignment.pk)
    after = siblings.filter(order__gt=assignment.order).order_by("order").values_list("pk", flat=True).first()
    return after or siblings.order_by("order").values_list("pk", flat=True).first()


@dataclass
class ControlAccuracy:
    annotator: str
    spans: int
    span_correct: int
    explanations: int
    explanation_correct: int

    @property
    def span_percent(self) -> float | None:
        return round(100 * self.span_correct / self.spans, 1) if self.spans else None

    @property
    def explanation_percent(self) -> float | None:
        return round(100 * self.explanation_correct / self.explanations, 1) if self.explanations else None


def control_accuracy(campaign: Campaign) -> list[ControlAccuracy]:
    """Per annotator: how many judged control spans match the known verdicts.

    Only spans with a known verdict and a judgment that sets that verdict count; the explanation is scored
    only where the key gives one."""
    key = {
        cv.span_id: (cv.span_verdict, cv.explanation_verdict)
        for cv in ControlVerdict.objects.filter(campaign=campaign)
    }
    result = {
        username: ControlAccuracy(username, 0, 0, 0, 0)
        for username in Assignment.objects.filter(campaign=campaign, is_control=True)
        .values_list("annotator__username", flat=True).distinct()
    }
    judgments = SpanJudgment.objects.filter(
        assignment__campaign=campaign, assignment__is_control=True, span_id__in=list(key)
    ).values_list("annotator__username", "span_id", "span_verdict", "explanation_verdict")
    for username, span_id, span_verdict, explanation_verdict in judgments:
        row = result.setdefault(username, ControlAccuracy(username, 0, 0, 0, 0))
        known_span, known_explanation = key[span_id]
        if span_verdict:
            row.spans += 1
            row.span_correct += span_verdict == known_span
        if known_explanation and explanation_verdict:
            row.explanations += 1
            row.explanation_correct += explanation_verdict == known_explanation
    return sorted(result.values(), key=lambda r: r.annotator)


def control_spans(campaign: Campaign) -> list[tuple[ErrorSpan, str, ControlVerdict | None]]:
    """Spans of the campaign's control items with their real run label and known verdicts (researchers only)."""
    labels = campaign_run_labels(campaign.pk)
    item_ids = Assignment.objects.filter(Q(is_control=True) | Q(is_training=True), campaign=campaign).values_list(
        "item_id", flat=True)
    key = {cv.span_id: cv for cv in ControlVerdict.objects.filter(campaign=campaign)}
    rows = []
    for item_id in sorted(set(item_ids)):
        probe = Assignment(campaign=campaign, item_id=item_id)
        rows += [(span, label, key.get(span.pk)) for span, label in judged_spans(probe, labels, with_checks=False)]
    return rows


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


def campaign_named(value: str) -> Campaign:
    """The campaign a command's `--campaign` names: by id when the value is a number, else by name; a
    UserError (a command's exit status 2) names the value when there is none."""
    campaign = (Campaign.objects.filter(pk=int(value)).first() if value.isdigit()
                else Campaign.objects.filter(name=value).first())
    if campaign is None:
        raise UserError(f"--campaign: no campaign {value!r} (give its id or name)")
    return campaign
