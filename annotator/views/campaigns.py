"""Campaign pages: create one, the researcher's overview with control accuracy, the annotator's queue."""

from __future__ import annotations

from django.contrib import messages
from django.db import IntegrityError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from annotator.access import campaign_for_user
from annotator.forms import EXPLANATION_VERDICT_CHOICES, SPAN_VERDICT_CHOICES, CampaignForm
from annotator.models import Campaign, StudyLink
from annotator.rendering import markdown_html
from annotator.selectors import campaign_progress, campaign_run_labels, control_accuracy, control_spans, queue_for
from annotator.services.campaigns import ControlKey, campaign_control_set, campaign_create, campaign_set_labeling
from annotator.views.common import AppRequest, require_researcher
from annotator.views.join import participant_in, participant_queue
from annotator.vigilance import campaign_checks
from corpus import cleaning
from corpus.models import Dataset
from evaluation.models import EvaluatorRun
from jobs.models import JobStatus

KEPT_FIELDS = ("name", "annotators_per_item", "control_items", "control_arm", "seed", "guidelines")


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
            try:
                campaign = campaign_create(
                    name=data["name"], dataset=data["dataset"], runs=data["run_objects"],
                    annotators=list(data["annotators"]), aspects=data["aspects"],
                    annotators_per_item=data["annotators_per_item"], guidelines=data["guidelines"],
                    seed=data["seed"], control_item_ids=data["control_items"], created_by=request.user,
                    categories=data["categories"] or None, reviewers=list(data["reviewers"]),
                    sample=data["sample"], control_arm=data.get("control_arm") or 0.0, link=data["link"],
                    checks=data["checks"],
                )
            except (ValueError, IntegrityError) as exc:
                form.add_error(None, str(exc) if isinstance(exc, ValueError) else "A campaign of that name exists.")
            else:
                messages.success(request, f"Campaign created with {campaign.assignments.count()} assignments.")
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
    template = "annotator/campaign_new.html#campaign-form" if request.htmx else "annotator/campaign_new.html"
    return render(request, template, {"form": form})


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
        return render(request, "annotator/campaign_overview.html", {
            "campaign": campaign, "assignments": assignments, "progress": campaign_progress(campaign),
            "run_labels": sorted(((label, runs[run_id]) for run_id, label in labels.items()), key=lambda x: x[0]),
            "accuracy": control_accuracy(campaign), "checks": campaign_checks(campaign),
            "n_control": campaign.assignments.filter(is_control=True).values("item_id").distinct().count(),
            "has_link": StudyLink.objects.filter(campaign=campaign).exists(),
        })
    rows, summary = queue_for(campaign, request.user)
    return render(request, "annotator/queue.html", {"campaign": campaign, "rows": rows, "summary": summary})


@require_GET
def campaign_resume(request: AppRequest, pk: int) -> HttpResponse:
    campaign = campaign_for_user(request.user, pk)
    _, summary = queue_for(campaign, request.user)
    if summary.resume is None:
        messages.info(request, "Every item of this campaign is done. Thank you!")
        return redirect("campaign_entry", pk=campaign.pk)
    return redirect("item_screen", pk=summary.resume.pk)


@require_GET
def campaign_guidelines(request: AppRequest, pk: int) -> HttpResponse:
    campaign = campaign_for_user(request.user, pk)
    # Researchers write the guidelines; nh3 has already stripped anything active, so the HTML may be trusted.
    context = {"campaign": campaign, "guidelines_html": mark_safe(markdown_html(campaign.guidelines))}
    template = "annotator/guidelines.html#guidelines-body" if request.htmx else "annotator/guidelines.html"
    return render(request, template, context)


@require_http_methods(["GET", "POST"])
def campaign_control(request: AppRequest, pk: int) -> HttpResponse:
    """The answer key of the control items: researchers set the known verdicts of each span."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    rows = control_spans(campaign)
    if request.method == "POST":
        keys = [
            ControlKey(span_id=span.pk, span_verdict=request.POST.get(f"span-{span.pk}", ""),
                       explanation_verdict=request.POST.get(f"explanation-{span.pk}", ""),
                       note=request.POST.get(f"note-{span.pk}", ""))
            for span, _, _ in rows
        ]
        try:
            n = campaign_control_set(campaign=campaign, keys=[k for k in keys if k.span_verdict])
        except ValueError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Saved the known verdicts of {n} control spans.")
            return redirect("campaign_entry", pk=campaign.pk)
    return render(request, "annotator/campaign_control.html", {
        "campaign": campaign, "rows": rows, "span_choices": SPAN_VERDICT_CHOICES,
        "explanation_choices": EXPLANATION_VERDICT_CHOICES,
    })


@require_POST
def campaign_labeling(request: AppRequest, pk: int) -> HttpResponse:
    """Mark (or, with `clear`, unmark) the campaign as its dataset's labeling campaign: the one whose judges and
    reviewers give a dataset export's consensus (PUT /api/datasets/ID/labeling-campaign is the twin)."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign.objects.select_related("dataset"), pk=pk)
    clear = request.POST.get("clear") == "1"
    campaign_set_labeling(dataset=campaign.dataset, campaign=None if clear else campaign)
    messages.success(request, f"{campaign.dataset.name}: no labeling campaign." if clear else
                     f"{campaign.name} now gives the consensus of {campaign.dataset.name}'s exports.")
    return redirect("campaign_entry", pk=campaign.pk)
