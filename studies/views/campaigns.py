"""A study's own pages: setting one up, and its campaign page (for a participant, their queue)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.db import IntegrityError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers

from annotator.access import campaign_for_user
from annotator.models import Campaign
from annotator.selectors.campaigns import (
    campaign_progress,
    campaign_run_labels,
    control_accuracy,
    queue_for,
)
from annotator.selectors.pilot import campaign_plan
from annotator.services.campaigns import campaign_name_clash
from annotator.views.common import AppRequest, require_researcher
from corpus import cleaning, protocols
from corpus.models import Dataset
from errors import UserError
from errors.placing import refusal_place
from evaluation.models import EvaluatorRun
from jobs.models import JobStatus
from quality.engine import power
from quality.selectors.vigilance import campaign_checks
from studies.completion import completion_url_problem
from studies.design import checks_power_of
from studies.forms import CampaignForm, PlanForm
from studies.models import SetupReport, StudyLink
from studies.setup import CampaignSpec, campaign_create, campaign_dry_run
from studies.views.join import participant_in, participant_queue

KEPT_FIELDS = ("name", "annotators_per_item", "control_items", "control_arm", "seed", "guidelines", "protocol",
               "protocol_options")
# The form field that shows a refusal naming a CampaignSpec field the form spells otherwise.
SPEC_FIELDS = {"sample": "sample_strata", "routing": "routing_min_k", "link": "link_enabled",
               "control_item_ids": "control_items"}


@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def campaign_new(request: AppRequest) -> HttpResponse:
    require_researcher(request)
    run_pk = request.GET.get("run", "")
    run = (EvaluatorRun.objects.select_related("dataset", "aspect").exclude(status=JobStatus.CANCELLED)
           .filter(pk=cleaning.as_id(run_pk)).first() if cleaning.as_id(run_pk) else None)
    dataset_pk = request.POST.get("dataset") or request.GET.get("dataset") or (str(run.dataset_id) if run else "")
    dataset = Dataset.objects.filter(pk=cleaning.as_id(dataset_pk)).first() if cleaning.as_id(dataset_pk) else None
    if request.method == "POST":
        form = CampaignForm(request.POST, dataset=dataset)
        if form.is_valid():
            data = form.cleaned_data
            spec = CampaignSpec(
                name=data["name"], dataset=data["dataset"], runs=data["run_objects"],
                annotators=list(data["annotators"]), aspects=data["aspects"],
                annotators_per_item=data["annotators_per_item"], guidelines=data["guidelines"],
                seed=data["seed"], control_item_ids=data["control_items"],
                categories=data["categories"] or None, reviewers=list(data["reviewers"]),
                sample=data["sample"], control_arm=data.get("control_arm") or 0.0, link=data["link"],
                checks=data["checks"], routing=data["routing"], protocol=data["protocol"],
                protocol_options=data["protocol_options"], accept_weak_checks=data["accept_weak_checks"])
            if "dry_run" in request.POST:  # "Check the design": what creation would make and say, nothing made
                return _dry_run(request, form, spec)
            try:
                campaign = campaign_create(spec, created_by=request.user)
            except UserError as exc:
                refusal_place(form, exc, SPEC_FIELDS)
            except IntegrityError as exc:
                if not campaign_name_clash(exc):  # another constraint is a defect, not the name's fault
                    raise
                form.add_error("name", "A campaign of that name exists.")
            else:
                messages.success(request, f"Campaign created with {campaign.assignments.count()} assignments.")
                for warning in campaign.warnings:
                    messages.warning(request, f"Warning: {warning}.")
                simulated = [r.label for r in data["run_objects"] if r.simulated]
                if simulated:
                    messages.warning(request, f"Built on simulated evaluator run(s) {', '.join(simulated)}: the spans "
                                              "came from the simulated server, not a model; its figures are marked "
                                              "simulated.")
                if campaign.status == Campaign.Status.DRAFT:
                    messages.info(request, "It is a draft: review its decoys, then open it.")
                    return redirect("campaign_decoys", pk=campaign.pk)
                return redirect("campaign_entry", pk=campaign.pk)
    else:
        # Picking a dataset re-renders the form: what was typed so far comes along (hx-include) and stays.
        initial = {key: request.GET.get(key) for key in KEPT_FIELDS if request.GET.get(key)}
        initial["annotators"] = request.GET.getlist("annotators")
        initial["dataset"] = dataset
        if run is not None:  # "Start a campaign" on a run page: that run (and its aspect) preselected
            initial.update(runs=[str(run.pk)], aspects=[run.aspect.name])
        form = CampaignForm(initial=initial, dataset=dataset)
    template = "studies/campaign_new.html#campaign-form" if request.htmx else "studies/campaign_new.html"
    return render(request, template, {"form": form, **_plan(request)})


def _dry_run(request: AppRequest, form: CampaignForm, spec: CampaignSpec) -> HttpResponse:
    """The form again with the set-up report of a dry run: the checks' power, the warnings, and the refusal
    creation would give (placed at its fields)."""
    try:
        preview = campaign_dry_run(spec, created_by=request.user)
    except UserError as exc:
        refusal_place(form, exc, SPEC_FIELDS)
        preview = None
    else:
        if preview.refusal is not None:
            refusal_place(form, preview.refusal, SPEC_FIELDS)
    template = "studies/campaign_new.html#campaign-form" if request.htmx else "studies/campaign_new.html"
    return render(request, template, {
        "form": form, "preview": preview, "checks_power": preview.checks_power if preview else [],
        "speed_rule": power.SPEED_RULE, **_plan(request)})


# The planner's fields, named by the planning service without the form's prefix.
PLAN_FIELDS = {"outputs": "plan_outputs", "judges": "plan_judges", "difference": "plan_difference"}


def _plan(request: AppRequest) -> dict[str, object]:
    """The planner box of the campaign form: its form, and the plan once a pilot and sizes are given."""
    if "plan_from" not in request.GET:
        return {"plan_form": PlanForm()}
    form = PlanForm(request.GET)
    if not form.is_valid():
        return {"plan_form": form}
    data = form.cleaned_data
    try:
        plan = campaign_plan(data["plan_from"], outputs=data["plan_outputs"], judges=data["plan_judges"],
                             difference=data["plan_difference"])
    except UserError as exc:
        refusal_place(form, exc, PLAN_FIELDS)
        return {"plan_form": form}
    return {"plan_form": form, "plan": plan}


@require_GET
def campaign_entry(request: AppRequest, pk: int) -> HttpResponse:
    """Researchers see the overview (real run labels, progress, control accuracy); annotators their queue."""
    if (participant := participant_in(request, pk)) is not None:
        return participant_queue(request, participant)  # also when all their items went back to the pool
    campaign = campaign_for_user(request.user, pk)
    if request.user.sees_everything:
        labels = campaign_run_labels(campaign.pk)
        runs = {r.pk: r for r in EvaluatorRun.objects.filter(pk__in=list(labels)).select_related("evaluator")}
        assignments = campaign.assignments.select_related("item", "annotator").order_by("annotator__username", "order")
        return render(request, "studies/campaign_overview.html", {
            "campaign": campaign, "assignments": assignments, "progress": campaign_progress(campaign),
            "run_labels": sorted(((label, runs[run_id]) for run_id, label in labels.items()), key=lambda x: x[0]),
            "accuracy": control_accuracy(campaign), "checks": campaign_checks(campaign),
            "n_control": campaign.assignments.filter(is_control=True).values("item_id").distinct().count(),
            "link": (link := StudyLink.objects.filter(campaign=campaign).first()), "has_link": link is not None,
            "link_url": request.build_absolute_uri(reverse("join", args=[link.token])) if link else "",
            "link_joined": link.participants.count() if link else 0,
            "report": SetupReport.objects.filter(campaign=campaign).first(),
            "checks_power": checks_power_of(campaign), "speed_rule": power.SPEED_RULE,
            "protocol": protocols.get(campaign.protocol),
            # the campaign's own category set is offered only where the protocol lets it decide (MQM has a tree)
            "own_categories": protocols.get(campaign.protocol).categories(campaign.protocol_options) is None,
            "protocol_options": json.dumps(campaign.protocol_options, indent=1, ensure_ascii=False)
            if campaign.protocol_options else "",
            "completion_problem": completion_url_problem(link.completion_url) if link and link.completion_url
            else None,
        })
    rows, summary = queue_for(campaign, request.user)
    return render(request, "studies/queue.html", {"campaign": campaign, "rows": rows, "summary": summary})
