"""The dashboard's tables of a campaign or dataset, as JSON (or one table as CSV)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Query, Router, Schema
from ninja.errors import HttpError

from accounts.access import require_researcher
from analytics.selectors import DEFAULT_RESAMPLES, DashboardData, Scope
from analytics.selectors.cache import cached_dashboard_data
from analytics.selectors.exclusion import Exclusion, exclude_flagged_param, exclusion_for
from analytics.tables import TABLE_BUILDERS, Table, dashboard_tables
from annotator.models import Campaign
from corpus import protocols
from corpus.models import Dataset
from errors import UserError

# A seed outside 0..2**31-1 is a 422 naming the parameter (numpy refuses negative seeds with a 500 otherwise).
_SEED = Query(0, ge=0, le=2**31 - 1, description="bootstrap seed, 0..2**31-1")
# Read by analytics.selectors.exclusion.exclude_flagged_param: anything but 1, 0 or nothing is a 422 naming it.
EXCLUDE_FLAGGED = Query(None, description="1: leave the annotators the quality checks flag out of every figure; "
                                          "0: count them; absent: the campaign's exclude_flagged setting")

router = Router(tags=["analytics"])
MAX_RESAMPLES = 10_000


class ColumnOut(Schema):
    key: str
    label: str
    kind: str


class TableOut(Schema):
    key: str
    title: str
    note: str
    columns: list[ColumnOut]
    rows: list[dict[str, Any]]


class DashboardOut(Schema):
    campaign_id: int | None
    dataset_id: int | None
    aspect: str
    system: str
    reference: str
    references: list[str]
    resamples: int
    seed: int
    exclude_flagged: bool  # whether flagged annotators were left out (false for a dataset without a campaign)
    excluded: list[str]  # the annotators left out
    tables: list[TableOut]


def _compute(scope: Scope, reference: str, resamples: int, seed: int) -> DashboardData:
    if not 0 <= resamples <= MAX_RESAMPLES:
        raise UserError(f"resamples must be between 0 and {MAX_RESAMPLES}", field="resamples")
    return cached_dashboard_data(scope, reference=reference, n_resamples=resamples, seed=seed)


def _dashboard_out(data: DashboardData, resamples: int, seed: int, exclusion: Exclusion | None) -> dict[str, Any]:
    return {
        "campaign_id": data.scope.campaign_id, "dataset_id": data.scope.dataset_id, "aspect": data.scope.aspect,
        "system": data.scope.system, "reference": data.reference_value,
        "references": [value for value, _ in data.references], "resamples": resamples, "seed": seed,
        "exclude_flagged": bool(exclusion and exclusion.exclude),
        "excluded": list(exclusion.excluded) if exclusion else [],
        "tables": [t.as_dict() for t in dashboard_tables(data)],
    }


def _one_table(data: DashboardData, key: str, format: str) -> dict[str, Any] | HttpResponse:
    if key not in TABLE_BUILDERS:
        raise HttpError(404, f"unknown table {key!r}; tables: {', '.join(TABLE_BUILDERS)}")
    table: Table = TABLE_BUILDERS[key](data)
    if format == "csv":
        return HttpResponse(table.to_csv(), content_type="text/csv; charset=utf-8")
    if format != "json":
        raise UserError("format must be json or csv", field="format")
    return table.as_dict()


VERDICT_FIGURE = "table4"  # the declared figure (corpus.protocols) whose campaigns this dashboard tabulates


def _campaign_scope(request: HttpRequest, campaign_id: int, aspect: str, system: str,
                    exclude_flagged: str | None) -> tuple[Scope, Exclusion]:
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    declared = protocols.get(campaign.protocol)
    if VERDICT_FIGURE not in declared.figures:  # an MQM or ESA campaign has no verdicts to tabulate
        raise UserError(f"campaign: {campaign.name!r} runs the {campaign.protocol} protocol, whose figures "
                        f"({', '.join(declared.figures)}) are at GET /api/analytics/campaigns/{campaign.pk}/"
                        f"{campaign.protocol}; this dashboard tabulates verdicts on machine spans", field="campaign")
    exclusion = exclusion_for(campaign, exclude_flagged_param(exclude_flagged))
    return Scope(campaign_id=campaign.pk, aspect=aspect, system=system, exclude_flagged=exclusion.exclude), exclusion


def _dataset_scope(request: HttpRequest, dataset_id: int, campaign: int | None, aspect: str, system: str,
                   exclude_flagged: str | None) -> tuple[Scope, Exclusion | None]:
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    choice = exclude_flagged_param(exclude_flagged)
    exclusion = None
    if campaign is not None:
        exclusion = exclusion_for(get_object_or_404(Campaign, pk=campaign, dataset=dataset), choice)
    scope = Scope(dataset_id=dataset.pk, campaign_id=campaign, aspect=aspect, system=system,
                  exclude_flagged=exclusion.exclude if exclusion else None)
    return scope, exclusion


@router.get("/campaigns/{campaign_id}", response=DashboardOut, operation_id="retrieve_campaign_analytics")
def retrieve_campaign_analytics(
    request: HttpRequest, campaign_id: int, aspect: str = "", system: str = "", reference: str = "",
    resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED, exclude_flagged: str | None = EXCLUDE_FLAGGED,
):
    """All tables of a campaign's dashboard (Table 4 with CIs, flags, agreement, overlap, calibration, scores)."""
    scope, exclusion = _campaign_scope(request, campaign_id, aspect, system, exclude_flagged)
    return _dashboard_out(_compute(scope, reference, resamples, seed), resamples, seed, exclusion)


@router.get(
    "/campaigns/{campaign_id}/tables/{key}", response=TableOut, operation_id="retrieve_campaign_analytics_table"
)
def retrieve_campaign_analytics_table(
    request: HttpRequest, campaign_id: int, key: str, format: str = "json", aspect: str = "", system: str = "",
    reference: str = "", resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED,
    exclude_flagged: str | None = EXCLUDE_FLAGGED,
):
    scope, _ = _campaign_scope(request, campaign_id, aspect, system, exclude_flagged)
    return _one_table(_compute(scope, reference, resamples, seed), key, format)


@router.get("/datasets/{dataset_id}", response=DashboardOut, operation_id="retrieve_dataset_analytics")
def retrieve_dataset_analytics(
    request: HttpRequest, dataset_id: int, campaign: int | None = None, aspect: str = "", system: str = "",
    reference: str = "", resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED,
    exclude_flagged: str | None = EXCLUDE_FLAGGED,
):
    """All tables of a dataset's dashboard: its runs over all its campaigns (or one), gold overlap, scores.
    `exclude_flagged` applies with `campaign` (a campaign's checks flag its annotators)."""
    scope, exclusion = _dataset_scope(request, dataset_id, campaign, aspect, system, exclude_flagged)
    return _dashboard_out(_compute(scope, reference, resamples, seed), resamples, seed, exclusion)


@router.get("/datasets/{dataset_id}/tables/{key}", response=TableOut, operation_id="retrieve_dataset_analytics_table")
def retrieve_dataset_analytics_table(
    request: HttpRequest, dataset_id: int, key: str, format: str = "json", campaign: int | None = None,
    aspect: str = "", system: str = "", reference: str = "", resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED,
    exclude_flagged: str | None = EXCLUDE_FLAGGED,
):
    scope, _ = _dataset_scope(request, dataset_id, campaign, aspect, system, exclude_flagged)
    return _one_table(_compute(scope, reference, resamples, seed), key, format)

