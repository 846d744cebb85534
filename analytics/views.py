"""Dashboard pages of a campaign and of a dataset, with CSV/JSON tables and SVG/PNG plots (researchers and admins)."""

from __future__ import annotations

import base64

from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers

from accounts.access import require_researcher
from accounts.models import User
from analytics.confidence_figures import confidence_context
from analytics.exports.jobs import export_file, export_job_create
from analytics.exports.labeled import labeled_card, labeled_response
from analytics.forms import ExportForm
from analytics.models import ExportJob
from analytics.report.build import REPORT_FORMATS, report_zip
from analytics.report.sections import api_path, protocol_sections, ranking_tables
from analytics.selectors import DEFAULT_RESAMPLES, DashboardData, Scope, dashboard_data
from analytics.selectors.cache import cached, cached_dashboard_data, dashboard_key
from analytics.selectors.estimates import DEFAULT_HALF_WIDTH, sample_estimates
from analytics.selectors.exclusion import Exclusion, exclude_flagged_param, exclusion_for
from analytics.selectors.priming import has_control_arm, priming_paragraph, priming_report, simulated_labels
from analytics.selectors.quality import quality_summary
from analytics.selectors.ranking import BY_CHOICES, campaign_aspects, campaign_ranking
from analytics.tables import (
    TABLE_BUILDERS,
    dashboard_tables,
    empty_state,
    estimates_table,
    power_table,
    priming_tables,
    quality_tables,
)
from annotator.models import Campaign
from corpus import protocols
from corpus.models import Dataset, Item
from jobs.views import job_page
from stats.sampling import SamplingError, check_half_width

MAX_RESAMPLES = 10_000
OVERVIEW_TABLES = ("overview", "progress")  # shown in the overview card, not as sections
# Tables that only hold numbers once a verdict is in: before that they show the empty state, not zeros.
JUDGED_TABLES = frozenset({"accuracy", "explanations", "matrix", "accuracy_by_annotator", "flags", "agreement",
                           "pairwise", "distribution", "calibration", "severity_confusion"})


class AppRequest(HttpRequest):
    user: User


def _int_param(request: HttpRequest, name: str, default: int, *, low: int, high: int) -> int:
    try:
        value = int(request.GET.get(name, default))
    except ValueError:
        return default
    return max(low, min(high, value))


def _exclude_flagged(request: HttpRequest) -> bool | None:
    return exclude_flagged_param(request.GET.get("exclude_flagged"))


def _campaign_scope(request: AppRequest, pk: int) -> tuple[Campaign, Scope]:
    """The campaign and the scope the request asks for; `?exclude_flagged=` is resolved here, once, so the
    cached figures are keyed by the choice actually made."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign.objects.select_related("dataset"), pk=pk)
    exclusion = exclusion_for(campaign, _exclude_flagged(request))
    scope = Scope(
        campaign_id=campaign.pk, aspect=request.GET.get("aspect", ""), system=request.GET.get("system", ""),
        exclude_flagged=exclusion.exclude,
    )
    return campaign, scope


def _dataset_scope(request: AppRequest, pk: int) -> tuple[Dataset, Scope]:
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=pk)
    campaign_id = _int_param(request, "campaign", 0, low=0, high=2**62) or None
    campaign = dataset.campaigns.filter(pk=campaign_id).first() if campaign_id is not None else None
    if campaign_id is not None and campaign is None:
        raise Http404("No such campaign on this dataset.")
    choice = _exclude_flagged(request)
    scope = Scope(
        dataset_id=dataset.pk, campaign_id=campaign_id, aspect=request.GET.get("aspect", ""),
        system=request.GET.get("system", ""),
        exclude_flagged=exclusion_for(campaign, choice).exclude if campaign is not None else None,
    )
    return dataset, scope


def _without_exclusion(request: HttpRequest) -> str:
    """The page's query without `exclude_flagged`, for links that set it."""
    params = request.GET.copy()
    params.pop("exclude_flagged", None)
    return params.urlencode()


def _params(request: HttpRequest) -> dict:
    return {
        "reference": request.GET.get("reference", ""),
        "n_resamples": _int_param(request, "resamples", DEFAULT_RESAMPLES, low=0, high=MAX_RESAMPLES),
        "seed": _int_param(request, "seed", 0, low=0, high=2**31 - 1),
    }


def _compute(request: HttpRequest, scope: Scope) -> DashboardData:
    return cached_dashboard_data(scope, **_params(request))


def _dashboard(request: AppRequest, template_context: dict, scope: Scope, dataset: Dataset) -> HttpResponse:
    key = dashboard_key(scope, **_params(request))
    data = cached(key, lambda: dashboard_data(scope, **_params(request)))
    if template_context.get("protocol_figures") is not None:
        # A protocol that gives no verdicts on machine spans shows its own figures instead of Table 4's.
        context = template_context | {
            "data": data, "progress": _progress(data), "query": request.GET.urlencode(),
            "base_query": _without_exclusion(request),
        }
        return render(request, "analytics/dashboard.html", context)
    plots = cached(f"{key}:plots" if key else None, lambda: _plots().dashboard_plots(data))
    systems = list(
        # order_by: without it the model's default ordering joins the DISTINCT and repeats each system per item.
        Item.objects.filter(dataset=dataset, derived_from__isnull=True).exclude(system="").order_by("system")
        .values_list("system", flat=True).distinct()[:200]
    )
    campaign = template_context.get("campaign")
    rankings = []
    if campaign is not None and data.accuracy.pooled.matrix.total:
        rankings = [ranking_tables(campaign_ranking(campaign, aspect=aspect, by=by,
                                                    exclude_flagged=scope.exclude_flagged))
                    for aspect in campaign_aspects(campaign) for by in BY_CHOICES]
    tables = dashboard_tables(data)
    context = template_context | {
        "data": data, "tables": [t for t in tables if t.key not in OVERVIEW_TABLES], "plots": plots,
        "overview": tables[0], "empty": empty_state(data), "judged_tables": JUDGED_TABLES, "rankings": rankings,
        "progress": _progress(data),
        "aspects": sorted({r.aspect for r in data.runs} | ({scope.aspect} if scope.aspect else set())),
        "systems": sorted(systems), "query": request.GET.urlencode(), "base_query": _without_exclusion(request),
    }
    return render(request, "analytics/dashboard.html", context)


def _progress(data: DashboardData) -> dict:
    return {"assigned": sum(p.assigned for p in data.progress), "judged": sum(p.judged for p in data.progress),
            "rows": data.progress}


def _protocol_figures(campaign: Campaign, exclusion: Exclusion) -> list[dict] | None:
    """The campaign's protocol's own figure sections with each one's API path and charts as data: URIs; None
    for a protocol whose figures are the verdicts' (Table 4 and the rest of the page)."""
    if protocols.get(campaign.protocol).judges_machine_spans:
        return None
    plots = _plots()

    def uri(figure: object) -> str:
        return "data:image/svg+xml;base64," + base64.b64encode(plots.render(figure)).decode("ascii")

    return [{"section": section, "api": api_path(key),
             "charts": [(fig.caption, uri(fig.figure)) for fig in section.figures]}
            for key, section in protocol_sections(campaign, exclusion)]


def _table_response(data: DashboardData, key: str, fmt: str, filename: str) -> HttpResponse:
    if key not in TABLE_BUILDERS or fmt not in ("csv", "json"):
        raise Http404("Unknown table or format.")
    table = TABLE_BUILDERS[key](data)
    if fmt == "csv":
        response = HttpResponse(table.to_csv(), content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse(table.to_json(), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}-{key}.{fmt}"'
    return response


def _plot_response(data: DashboardData, name: str, fmt: str) -> HttpResponse:
    plots = _plots()
    if name not in plots.PLOT_BUILDERS or fmt not in ("svg", "png"):
        raise Http404("Unknown plot or format.")
    fig = plots.PLOT_BUILDERS[name](data)
    if fig is None:
        raise Http404("Nothing to plot.")
    return HttpResponse(plots.render(fig, fmt), content_type="image/svg+xml" if fmt == "svg" else "image/png")


@require_GET
def campaign_dashboard(request: AppRequest, pk: int) -> HttpResponse:
    campaign, scope = _campaign_scope(request, pk)
    exclusion = exclusion_for(campaign, _exclude_flagged(request))
    simulated = simulated_labels(campaign)
    summary = quality_summary(campaign, exclusion)
    context = {"title": campaign.name, "campaign": campaign, "dataset": campaign.dataset, "kind": "campaign",
               "exclusion": exclusion, "quality": summary, "quality_tables": quality_tables(summary),
               "power_table": power_table(summary),
               "exclude_choice": request.GET.get("exclude_flagged", "")}
    if campaign.is_sampled:
        half_width = half_width_param(request.GET.get("half_width", ""))
        estimates = sample_estimates(campaign, half_width=half_width, exclude_flagged=exclusion.exclude)
        context |= {"estimates": estimates_table(estimates, half_width, simulated), "half_width": half_width}
    context["protocol_figures"] = _protocol_figures(campaign, exclusion)
    if has_control_arm(campaign) and context["protocol_figures"] is None:
        rows = priming_report(campaign, exclude_flagged=exclusion.exclude)
        context |= {"priming": priming_tables(rows, simulated), "priming_text": priming_paragraph(rows, simulated)}
    context |= confidence_context(campaign, exclusion.exclude)
    return _dashboard(request, context, scope, campaign.dataset)


def half_width_param(text: str) -> float:
    """The planner's half-width from a query string: a share (0.05) or percentage points (5); default 0.05."""
    if not text:
        return DEFAULT_HALF_WIDTH
    try:
        value = float(text)
    except ValueError:
        raise SamplingError(f"half_width: {text[:40]!r} is not a number (give 0.05 or 5 for ±5 points)",
                            field="half_width") from None
    return check_half_width(value / 100 if value >= 1 else value)


@require_GET
def campaign_table(request: AppRequest, pk: int, key: str, fmt: str) -> HttpResponse:
    campaign, scope = _campaign_scope(request, pk)
    return _table_response(_compute(request, scope), key, fmt, f"campaign-{campaign.pk}")


@require_GET
def campaign_report(request: AppRequest, pk: int, fmt: str) -> HttpResponse:
    """The study report's files zipped (the browser twin of `manage.py export_report`)."""
    campaign, _ = _campaign_scope(request, pk)
    if fmt not in REPORT_FORMATS:
        raise Http404("Unknown report format.")
    choice = _exclude_flagged(request)
    response = HttpResponse(report_zip(campaign, fmt, exclude_flagged=choice), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-report-{fmt}.zip"'
    return response


@require_GET
def campaign_plot(request: AppRequest, pk: int, name: str, fmt: str) -> HttpResponse:
    _, scope = _campaign_scope(request, pk)
    return _plot_response(_compute(request, scope), name, fmt)


@require_GET
def dataset_dashboard(request: AppRequest, pk: int) -> HttpResponse:
    dataset, scope = _dataset_scope(request, pk)
    context = {
        "title": dataset.name, "dataset": dataset, "kind": "dataset",
        "campaigns": list(dataset.campaigns.order_by("name").values("pk", "name")),
    }
    return _dashboard(request, context, scope, dataset)


@require_GET
def dataset_table(request: AppRequest, pk: int, key: str, fmt: str) -> HttpResponse:
    dataset, scope = _dataset_scope(request, pk)
    return _table_response(_compute(request, scope), key, fmt, f"dataset-{dataset.pk}")


@require_GET
def dataset_plot(request: AppRequest, pk: int, name: str, fmt: str) -> HttpResponse:
    _, scope = _dataset_scope(request, pk)
    return _plot_response(_compute(request, scope), name, fmt)


def _plots():
    """Import matplotlib only when a page draws: it adds ~60 MB to every process that merely loads the URLs."""
    from analytics import plots

    return plots


# ---- exports as jobs --------------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def dataset_exports(request: AppRequest, pk: int) -> HttpResponse:
    """Choose a format and filters; the export runs as a worker job whose page shows progress and the download."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=pk)
    form = ExportForm(request.POST or None, dataset=dataset)
    if request.method == "POST" and form.is_valid():
        job = export_job_create(dataset=dataset, fmt=form.cleaned_data["format"], keep=form.export_filter(),
                                user=request.user)
        return redirect("export_job", pk=job.pk)
    jobs = ExportJob.objects.filter(dataset=dataset).order_by("-pk")[:20]
    return render(request, "analytics/exports.html", {"dataset": dataset, "form": form, "jobs": jobs})


@require_GET
@vary_on_headers("HX-Request")
def export_job(request: AppRequest, pk: int) -> HttpResponse:
    require_researcher(request)
    job = get_object_or_404(ExportJob.objects.select_related("dataset"), pk=pk)
    context = {"job": job}
    return job_page(request, job, "analytics/export_job.html", "export-progress", context)



@require_GET
def export_download(request: AppRequest, pk: int, name: str) -> FileResponse:
    require_researcher(request)
    file = export_file(get_object_or_404(ExportJob, pk=pk), name)
    if file is None:
        raise Http404("No such file in a finished export.")
    return FileResponse(file, as_attachment=True, filename=name)


@require_GET
def labeled_export(request: AppRequest, pk: int, fmt: str) -> HttpResponse:
    """The campaign's labeled set (the browser twin of `manage.py export_labeled`)."""
    campaign, scope = _campaign_scope(request, pk)
    return labeled_response(campaign, fmt, exclude_flagged=scope.exclude_flagged)


@require_GET
def labeled_card_view(request: AppRequest, pk: int) -> HttpResponse:
    campaign, scope = _campaign_scope(request, pk)
    return JsonResponse(labeled_card(campaign, fmt="jsonl", exclude_flagged=scope.exclude_flagged),
                        json_dumps_params={"ensure_ascii": False, "indent": 1})
