"""Read-side queries about campaigns: who sees which, progress, queues, the control arm's accuracy."""


from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from accounts.models import User
from annotator.models import Assignment, Campaign, ControlVerdict, SpanJudgment
from annotator.selectors.spans import campaign_run_labels, judged_spans
from annotator.selectors.worktime import WorkTime, assignment_time, times_by_annotator
from corpus import cleaning
from corpus.models import Dataset, ErrorSpan
from errors import UserError


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
class AnnotatorProgress:
    """One annotator's progress in a campaign: the row of the campaign page's progress table."""

    annotator: str
    total: int
    done: int
    in_progress: int
    active_seconds: float  # working time, annotator.selectors.worktime
    wall_seconds: float

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def campaign_progress(campaign: Campaign) -> list[AnnotatorProgress]:
    """Per annotator (one row each, by name): assigned items, finished, started, and working time."""
    assignments = Assignment.objects.filter(campaign=campaign)
    times = times_by_annotator(assignments)
    rows = (
        assignments.values("annotator_id", "annotator__username").order_by("annotator__username")
        .annotate(total=Count("id"), done=Count("id", filter=Q(status=Assignment.Status.DONE)),
                  in_progress=Count("id", filter=Q(status=Assignment.Status.IN_PROGRESS)))
    )
    return [AnnotatorProgress(r["annotator__username"], r["total"], r["done"], r["in_progress"],
                              times[r["annotator_id"]].active, times[r["annotator_id"]].wall) for r in rows]


@dataclass
class QueueSummary:
    total: int
    done: int
    time: WorkTime  # active and wall time over the queue (annotator.selectors.worktime)
    resume: Assignment | None

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def queue_for(campaign: Campaign, user: User) -> tuple[list[Assignment], QueueSummary]:
    """The annotator's own assignments in their shuffled order, and where to resume (first unfinished,
    preferring the one they were working on)."""
    rows = list(
        Assignment.objects.filter(campaign=campaign, annotator=user).only(
            "pk", "order", "status", "active_seconds", "started_at", "last_active_at", "finished_at", "campaign_id",
            "item_id"
        ).order_by("order")
    )
    resume = next((a for a in rows if a.status == Assignment.Status.IN_PROGRESS), None) or next(
        (a for a in rows if a.status == Assignment.Status.TODO), None
    )
    summary = QueueSummary(
        total=len(rows), done=sum(a.status == Assignment.Status.DONE for a in rows),
        time=sum((assignment_time(a) for a in rows), WorkTime(0.0, 0.0)), resume=resume,
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


def campaign_key_items(campaign: Campaign) -> set[int]:
    """The items whose spans carry a key: control and training items held by anyone, and the qualification's
    training items from creation on (a link-only study has no assignment before its first participant)."""
    held = Assignment.objects.filter(Q(is_control=True) | Q(is_training=True), campaign=campaign)
    return set(held.values_list("item_id", flat=True)) | set((campaign.qualification or {}).get("items", []))


def control_spans(campaign: Campaign) -> list[tuple[ErrorSpan, str, ControlVerdict | None]]:
    """Spans of the campaign's control items with their real run label and known verdicts (researchers only)."""
    labels = campaign_run_labels(campaign.pk)
    item_ids = campaign_key_items(campaign)
    key = {cv.span_id: cv for cv in ControlVerdict.objects.filter(campaign=campaign)}
    rows = []
    for item_id in sorted(set(item_ids)):
        probe = Assignment(campaign=campaign, item_id=item_id)
        rows += [(span, label, key.get(span.pk)) for span, label in judged_spans(probe, labels, with_checks=False)]
    return rows


def campaign_named(value: str) -> Campaign:
    """The campaign a command's `--campaign` names: by id when the value is a number, else by name; a
    UserError (a command's exit status 2) names the value when there is none."""
    pk = cleaning.as_id(value)
    campaign = (Campaign.objects.filter(pk=pk).first() if pk is not None
                else Campaign.objects.filter(name=value).first())
    if campaign is None:
        raise UserError(f"--campaign: no campaign {value!r} (give its id or name)", field="campaign")
    return campaign
