"""API of the control arm's priming figures (researchers and admins)."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from accounts.access import require_researcher
from analytics.api.dashboards import EXCLUDE_FLAGGED
from analytics.selectors.exclusion import exclude_flagged_param
from analytics.selectors.priming import priming_dicts, priming_report, simulated_labels
from annotator.models import Campaign

router = Router(tags=["priming"])


class ShareOut(Schema):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


class PerOutputOut(Schema):
    primed: float | None
    unprimed: float | None
    difference: float | None  # primed - unprimed, paired over the outputs seen both ways
    ci_low: float | None
    ci_high: float | None
    n_outputs: int


class SecondsOut(Schema):
    primed: float | None
    unprimed: float | None


class PrimingOut(Schema):
    evaluator: str
    recall: ShareOut
    precision_confirmed: ShareOut
    precision_found: ShareOut
    accepted_unfound: ShareOut
    errors_per_output: PerOutputOut
    seconds_per_span: SecondsOut
    unlocated: int = Field(description="Machine spans on control-arm outputs without a location in the output: "
                                       "they could not have been found unprimed, so accepted_unfound leaves them out.")
    simulated: bool = Field(description="The evaluator's run was answered by the simulated server: no result.")


@router.get("/campaigns/{campaign_id}/priming", response=list[PrimingOut], operation_id="list_priming_figures")
def list_priming_figures(request: HttpRequest, campaign_id: int, exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """Per evaluator: machine recall, precision two ways, accepted without having been found, errors per output
    in each arm and time per error span, each share with its n and a 95% bootstrap interval over outputs.
    An empty list for a campaign without a control arm."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    rows = priming_report(campaign, exclude_flagged=exclude_flagged_param(exclude_flagged))
    return priming_dicts(rows, simulated_labels(campaign))
