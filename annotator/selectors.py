"""Read-side queries of the annotation app that cross relations or aggregate."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, F, Q, QuerySet
from django.http import Http404

from annotator.models import (
    Annotation,
    AnnotationKind,
    Assignment,
    Campaign,
    CampaignRun,
    ControlVerdict,
    Dataset,
    ErrorSpan,
    SpanJudgment,
    User,
)
from annotator.rendering import SpanRef, group_spans


def datasets_for_home() -> QuerySet[Dataset]:
    return Dataset.objects.select_related("task").annotate(n_items=Count("items", distinct=True)).order_by("name")


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

JUDGED_KIND_PRIORITY: tuple[str, ...] = (AnnotationKind.ENSEMBLE, AnnotationKind.SUPERVISOR, AnnotationKind.ANNOTATOR)
"""Per run and item, the annotations of the first kind present are judged: the merged ensemble answer when the
run has one, else the supervisor's, else the single annotator LLM's. Per-model answers inside an ensemble are
inputs to the merge and are not judged again."""


@dataclass
class ErrorRow:
    """One machine error as the annotator sees it: the span, its neutral label, and their own judgment."""

    span: ErrorSpan
    label: str
    number: int
    judgment: SpanJudgment | None = None

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
        return f"place-{self.rows[0].span.pk}"


def assignment_for_user(user: User, pk: int, *, for_update: bool = False) -> Assignment:
    """Return the assignment if `user` owns it (researchers and admins may read any); else raise Http404.

    404 rather than 403 so that an annotator cannot even learn that someone else's assignment exists."""
    qs = Assignment.objects.select_related("campaign", "item", "item__dataset")
    if not user.sees_everything:
        qs = qs.filter(annotator=user)
    assignment = qs.filter(pk=pk).first()
    if assignment is None:
        raise Http404("No such assignment.")
    return assignment


def campaign_run_labels(campaign_id: int) -> dict[int, str]:
    return dict(CampaignRun.objects.filter(campaign_id=campaign_id).values_list("run_id", "label"))


def _aspect_filter(campaign: Campaign) -> Q:
    if not campaign.aspects:
        return Q()
    return Q(annotation__aspect__in=[*campaign.aspects, ""])


def judged_spans(assignment: Assignment, labels: dict[int, str] | None = None) -> list[tuple[ErrorSpan, str]]:
    """Return the machine spans the annotator judges on this assignment, with their neutral labels, in screen
    order (by label, then the evaluator's own order)."""
    labels = campaign_run_labels(assignment.campaign_id) if labels is None else labels
    spans = list(
        ErrorSpan.objects.filter(
            _aspect_filter(assignment.campaign),
            annotation__item_id=assignment.item_id,
            annotation__run_id__in=list(labels),
            annotation__kind__in=JUDGED_KIND_PRIORITY,
        ).select_related("annotation").order_by("annotation_id", "position", "pk")
    )
    best: dict[tuple[int, str], int] = {}
    for span in spans:
        key = (span.annotation.run_id, span.annotation.aspect)
        rank = JUDGED_KIND_PRIORITY.index(span.annotation.kind)
        best[key] = min(best.get(key, rank), rank)
    chosen = [
        s for s in spans
        if JUDGED_KIND_PRIORITY.index(s.annotation.kind) == best[(s.annotation.run_id, s.annotation.aspect)]
    ]
    chosen.sort(key=lambda s: (labels[s.annotation.run_id], s.annotation.aspect, s.position, s.pk))
    return [(s, labels[s.annotation.run_id]) for s in chosen]


def assignment_for_work(user: User, pk: int) -> Assignment:
    """The user's own assignment with only what a save needs (no item texts: RotoWire inputs are large);
    anyone else's is Http404."""
    assignment = (
        Assignment.objects.select_related("campaign")
        .only("pk", "status", "order", "annotator_id", "item_id", "campaign_id", "started_at", "finished_at",
              "campaign__status", "campaign__aspects", "campaign__name")
        .filter(pk=pk, annotator=user)
        .first()
    )
    if assignment is None:
        raise Http404("No such assignment.")
    return assignment


def judged_span_for_assignment(assignment: Assignment, span_pk: int) -> tuple[ErrorSpan, str]:
    """Return one span the assignment judges, with its neutral label; raise Http404 for any other span.

    The common case (a merged ensemble span) costs one query; other kinds add one to check no answer of a
    higher-priority kind exists for the same run and item."""
    row = (
        ErrorSpan.objects.filter(
            _aspect_filter(assignment.campaign),
            pk=span_pk,
            annotation__item_id=assignment.item_id,
            annotation__kind__in=JUDGED_KIND_PRIORITY,
            annotation__run__campaign_runs__campaign_id=assignment.campaign_id,
        )
        # Same filter() call, so this reuses the campaign-run join above: the label of this campaign only.
        .annotate(neutral_label=F("annotation__run__campaign_runs__label"))
        .select_related("annotation")
        .only("pk", "annotation_id", "position", "text", "start", "end", "match", "multi_part", "ambiguous",
              "explanation", "severity", "category", "annotation__kind", "annotation__run_id",
              "annotation__aspect", "annotation__item_id")
        .first()
    )
    if row is None:
        raise Http404("No such error on this item.")
    rank = JUDGED_KIND_PRIORITY.index(row.annotation.kind)
    if rank > 0 and Annotation.objects.filter(
        item_id=assignment.item_id, run_id=row.annotation.run_id, aspect=row.annotation.aspect,
        kind__in=JUDGED_KIND_PRIORITY[:rank],
    ).exists():
        raise Http404("No such error on this item.")
    return row, row.neutral_label


def error_rows(assignment: Assignment) -> list[ErrorRow]:
    pairs = judged_spans(assignment)
    judgments = {
        j.span_id: j
        for j in SpanJudgment.objects.filter(annotator_id=assignment.annotator_id, span_id__in=[s.pk for s, _ in pairs])
    }
    return [ErrorRow(span=s, label=label, number=n, judgment=judgments.get(s.pk))
            for n, (s, label) in enumerate(pairs, start=1)]


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
        members = [by_id[i] for i in ids]
        start = min(r.span.start for r in members)
        end = max(r.span.end for r in members)
        groups.append(ErrorGroup(rows=members, start=start, end=end, text=output[start:end]))
    loose: dict[str, list[ErrorRow]] = {}
    for r in rows:
        if not r.has_offsets:
            loose.setdefault(" ".join(r.span.text.split()).casefold(), []).append(r)
    groups += [ErrorGroup(rows=members, start=None, end=None, text=members[0].span.text) for members in loose.values()]
    return groups


def assignment_is_complete(assignment: Assignment) -> tuple[int, int]:
    """Return (complete, total) machine errors of the assignment for its annotator."""
    rows = error_rows(assignment)
    return sum(r.is_complete for r in rows), len(rows)


def added_spans(assignment: Assignment) -> list[ErrorSpan]:
    return list(
        ErrorSpan.objects.filter(
            annotation__item_id=assignment.item_id, annotation__campaign_id=assignment.campaign_id,
            annotation__kind=AnnotationKind.HUMAN, annotation__author_id=assignment.annotator_id,
        ).select_related("annotation").order_by("start", "pk")
    )


def added_span_for_user(user: User, pk: int) -> tuple[ErrorSpan, Assignment]:
    """Return a span the user added in a campaign, with the assignment it belongs to; else raise Http404."""
    span = (
        ErrorSpan.objects.filter(pk=pk, annotation__kind=AnnotationKind.HUMAN, annotation__author=user,
                                 annotation__campaign__isnull=False)
        .select_related("annotation")
        .first()
    )
    if span is None:
        raise Http404("No such added error.")
    assignment = (
        Assignment.objects.select_related("campaign", "item")
        .filter(campaign_id=span.annotation.campaign_id, item_id=span.annotation.item_id, annotator=user)
        .first()
    )
    if assignment is None:
        raise Http404("No such added error.")
    return span, assignment


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
    item_ids = Assignment.objects.filter(campaign=campaign, is_control=True).values_list("item_id", flat=True)
    key = {cv.span_id: cv for cv in ControlVerdict.objects.filter(campaign=campaign)}
    rows = []
    for item_id in sorted(set(item_ids)):
        probe = Assignment(campaign=campaign, item_id=item_id)
        rows += [(span, label, key.get(span.pk)) for span, label in judged_spans(probe, labels)]
    return rows
