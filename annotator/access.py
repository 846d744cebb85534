"""Object access of the annotation layer, decided in one place: campaigns, assignments, added errors.

Every refusal is an `accounts.access.AccessError`: 404 where an annotator must not even learn that the
object exists, 403 where a researcher may read but not write, 409 where the campaign is not open.
"""

from __future__ import annotations

from accounts.access import AccessError
from accounts.models import User
from annotator import checks
from annotator.models import Assignment, Campaign
from annotator.protocols import OtherProtocol as OtherProtocol  # the protocol modules decide; callers import here
from annotator.protocols import check_protocol as check_protocol
from corpus.models import AnnotationKind, ErrorSpan
from errors import Conflict

NOT_YOURS = "Only the assigned annotator can change this item."


def campaign_for_user(user: User, pk: int) -> Campaign:
    """Researchers see every campaign; an annotator only those with an assignment of theirs."""
    campaign = Campaign.objects.select_related("dataset").filter(pk=pk).first()
    if campaign is None or (
        not user.sees_everything and not Assignment.objects.filter(campaign=campaign, annotator=user).exists()
    ):
        raise AccessError.not_found("No such campaign.")
    return campaign


def assignment_for_user(user: User, pk: int) -> Assignment:
    """An assignment to read: the user's own; researchers and admins may read any."""
    qs = Assignment.objects.select_related("campaign", "item", "item__dataset")
    if not user.sees_everything:
        qs = qs.filter(annotator=user)
    assignment = qs.filter(pk=pk).first()
    if assignment is None:
        raise AccessError.not_found("No such assignment.")
    return assignment


def assignment_to_edit(user: User, pk: int) -> Assignment:
    """The user's own assignment; a researcher reading someone else's gets 403, anyone else 404."""
    assignment = assignment_for_user(user, pk)
    if assignment.annotator_id != user.pk:
        raise AccessError.forbidden(NOT_YOURS)
    return assignment


def assignment_for_work(user: User, pk: int) -> Assignment:
    """Like assignment_to_edit, but loads no item text: the verdict-save path must stay lean."""
    assignment = (
        Assignment.objects.select_related("campaign")
        .only("pk", "status", "phase", "order", "annotator_id", "item_id", "campaign_id", "started_at", "finished_at",
              "last_active_at", "is_training", "campaign__qualification", "campaign__status",
              "campaign__aspects", "campaign__name", "campaign__is_sampled")
        .filter(pk=pk, annotator=user)
        .first()
    )
    if assignment is None:
        if user.sees_everything and Assignment.objects.filter(pk=pk).exists():
            raise AccessError.forbidden(NOT_YOURS)
        raise AccessError.not_found("No such assignment.")
    return assignment


def check_can_work(assignment: Assignment, user: User) -> None:
    """Only the assignee changes an item, only while its campaign is open, and (in a campaign with a
    qualification step) real items only once the annotator passed it."""
    if assignment.annotator_id != user.pk:
        raise AccessError.forbidden(NOT_YOURS)
    if assignment.campaign.status == Campaign.Status.DRAFT:
        raise AccessError.conflict("This campaign has not opened yet; its researchers are still preparing it.")
    if assignment.campaign.status != Campaign.Status.OPEN:
        raise AccessError.conflict("This campaign is closed; its judgments can no longer change.")
    if (problem := checks.installed().gate(assignment)) is not None:
        raise AccessError.conflict(problem)


class ItemFinished(Conflict):
    """A new change to an item its annotator finished (409)."""


def check_item_open(assignment: Assignment, what: str) -> None:
    """A finished item keeps what it was finished with: a new change to its `what` is refused. Undo and redo
    replay changes already made and may reach a finished item; they say so (an undo that takes a verdict away
    reopens it)."""
    if assignment.is_done():
        raise ItemFinished(f"Item {assignment.order} is finished: its {what} can no longer change.")


def added_span_for_user(user: User, pk: int) -> tuple[ErrorSpan, Assignment]:
    """A span the user added in a campaign, with the assignment it belongs to; anyone else's is 404."""
    span = (
        ErrorSpan.objects.filter(
            pk=pk, annotation__kind=AnnotationKind.HUMAN, annotation__source__added__annotator=user
        )
        .select_related("annotation__source__added")
        .first()
    )
    if span is None:
        raise AccessError.not_found("No such added error.")
    assignment = (
        Assignment.objects.select_related("campaign", "item")
        .filter(campaign_id=span.annotation.source.added.campaign_id, item_id=span.annotation.item_id, annotator=user)
        .first()
    )
    if assignment is None:
        raise AccessError.not_found("No such added error.")
    return span, assignment


def can_review(user: User, campaign: Campaign) -> bool:
    """A campaign's named reviewers adjudicate it; with none named, every researcher and admin does.
    Admins always may."""
    if not user.is_authenticated:
        return False
    if user.is_admin_role:
        return True
    if campaign.reviewers.exists():
        return campaign.reviewers.filter(pk=user.pk).exists()
    return user.sees_everything


def campaign_for_reviewer(user: User, pk: int) -> Campaign:
    """The campaign to adjudicate: 404 for whoever may not even see it, 403 for a reader who is no reviewer."""
    campaign = campaign_for_user(user, pk)
    if not can_review(user, campaign):
        raise AccessError.forbidden("Only this campaign's reviewers adjudicate its disagreements.")
    return campaign
