"""Read-side queries of the annotation app that cross relations or aggregate."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from annotator.models import Assignment, Campaign, Dataset, User


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
