"""Removing what the simulated server produced: a simulated run together with the campaigns built on it."""

from __future__ import annotations

from django.db import transaction

from annotator.models import Campaign
from annotator.services.campaigns import campaigns_delete
from errors import Conflict
from evaluation.models import EvaluatorRun


class NotSimulated(Conflict):
    """Only a simulated run may be deleted with its campaigns: real judgments are never thrown away this way."""


def simulated_run_campaigns(run: EvaluatorRun) -> list[Campaign]:
    """The campaigns that judge `run`'s spans (they go when the run goes), oldest first."""
    return list(Campaign.objects.filter(campaign_runs__run=run).distinct().order_by("created_at", "pk"))


@transaction.atomic
def simulated_run_delete(*, run: EvaluatorRun) -> list[str]:
    """Delete a simulated run, every campaign built on it (with their judgments), and return those campaigns'
    names. A campaign protects its runs otherwise, so the run could never go once a campaign used it."""
    run = EvaluatorRun.objects.select_for_update().get(pk=run.pk)
    if not run.simulated:
        raise NotSimulated(f"run {run.label} was answered by a real server; only simulated runs are deleted here")
    campaigns = simulated_run_campaigns(run)
    names = campaigns_delete(campaigns)
    run.delete()
    return names
