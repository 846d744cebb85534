"""Expert-weight surveys: create, invite, vote, close; weights are vote shares, frozen as numbered versions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import transaction
from django.utils import timezone

from accounts.access import AccessError
from accounts.models import User
from corpus.models import TaskType
from dhp.engine.errors import DhpError
from dhp.engine.kinds import BASE_KINDS
from dhp.engine.surveys import vote_shares
from dhp.models import Survey, SurveyInvitation, SurveyVote, SurveyWeights
from evaluation.models import Aspect


@transaction.atomic
def survey_create(
    *, task: TaskType, title: str, metrics: Sequence[str], issues: Sequence[str] | None = None,
    experts: Iterable[User] = (), user: User | None = None,
) -> Survey:
    """A survey over the task's metrics (with their definitions as the aspects give them) and quality issues."""
    aspects = {a.name: a.definition for a in Aspect.objects.filter(task=task)}
    unknown = [m for m in metrics if m not in aspects]
    if unknown:
        raise DhpError(f"task {task.slug!r} has no aspect(s) {', '.join(unknown)}", field="metrics")
    if len(metrics) < 2:
        raise DhpError("a survey needs at least two metrics to choose between", field="metrics")
    issues = list(issues or BASE_KINDS)
    bad = [i for i in issues if i not in BASE_KINDS]
    if bad:
        raise DhpError(f"unknown quality issue(s) {', '.join(bad)}; issues are {', '.join(BASE_KINDS)}", field="issues")
    survey = Survey.objects.create(
        task=task, title=title.strip() or f"Expert weights for {task.name}",
        metrics=[{"name": m, "definition": aspects[m]} for m in metrics], issues=issues, created_by=user,
    )
    survey_invite(survey=survey, experts=experts)
    return survey


def survey_invite(*, survey: Survey, experts: Iterable[User]) -> None:
    """Invite experts to an open survey; a closed one refuses (409): its weights are frozen, so a new expert
    could read the questions but never answer them."""
    if Survey.objects.filter(pk=survey.pk, status=Survey.Status.CLOSED).exists():
        raise AccessError.conflict("The survey is closed; it takes no new invitations.")
    SurveyInvitation.objects.bulk_create(
        [SurveyInvitation(survey=survey, expert=e) for e in experts], ignore_conflicts=True
    )


def survey_for_expert(user: User, survey_id: int, *, writable: bool = False) -> Survey:
    """The survey if this user is invited (404 otherwise, so others' surveys stay unknown); 409 when closed
    and a write was asked for."""
    survey = Survey.objects.select_related("task").filter(pk=survey_id, invitations__expert=user).first()
    if survey is None:
        raise AccessError.not_found("No such survey among your invitations.")
    if writable and survey.status == Survey.Status.CLOSED:
        raise AccessError.conflict("This survey is closed; its answers can no longer change.")
    return survey


@transaction.atomic
def votes_save(*, survey: Survey, expert: User, choices: dict[str, str]) -> int:
    """Save an expert's choice per issue (issue -> metric); returns how many were saved."""
    metrics = set(survey.metric_names())
    for issue, metric in choices.items():
        if issue not in survey.issues:
            raise DhpError(f"{issue!r} is not a question of this survey", field="issue")
        if metric not in metrics:
            raise DhpError(f"{metric!r} is not a metric of this survey", field="metric")
    for issue, metric in choices.items():
        SurveyVote.objects.update_or_create(survey=survey, expert=expert, issue=issue, defaults={"metric": metric})
    return len(choices)


def current_weights(survey: Survey) -> tuple[dict[str, dict[str, float]], int]:
    votes = list(SurveyVote.objects.filter(survey=survey).values_list("expert_id", "issue", "metric"))
    return vote_shares(votes, survey.issues, survey.metric_names()), len({v[0] for v in votes})


@transaction.atomic
def weights_snapshot(survey: Survey) -> SurveyWeights | None:
    """Freeze the current vote shares as a new version, unless they equal the latest one; None without votes."""
    Survey.objects.select_for_update().filter(pk=survey.pk).first()
    weights, n_experts = current_weights(survey)
    if not n_experts:
        return None
    latest = SurveyWeights.objects.filter(survey=survey).order_by("-version").first()
    if latest is not None and latest.weights == weights and latest.n_experts == n_experts:
        return latest
    return SurveyWeights.objects.create(
        survey=survey, version=(latest.version + 1) if latest else 1, weights=weights, n_experts=n_experts
    )


def weights_for_run(survey: Survey) -> SurveyWeights:
    """The version a DHP run uses: the current votes, frozen (a closed survey's last version)."""
    version = weights_snapshot(survey)
    if version is None:
        raise DhpError(f"survey {survey.pk} has no answers yet; its weights are undefined")
    return version


@transaction.atomic
def survey_close(*, survey: Survey) -> SurveyWeights | None:
    """Close the survey (no more answers) and freeze its final weights."""
    updated = Survey.objects.filter(pk=survey.pk, status=Survey.Status.OPEN).update(
        status=Survey.Status.CLOSED, closed_at=timezone.now()
    )
    if not updated:
        raise AccessError.conflict("The survey is already closed.")
    survey.refresh_from_db()
    return weights_snapshot(survey)
