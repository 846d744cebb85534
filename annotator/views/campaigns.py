"""Campaign pages: create one, the researcher's overview with control accuracy, the annotator's queue."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import campaign_for_user
from annotator.forms import EXPLANATION_VERDICT_CHOICES, SPAN_VERDICT_CHOICES
from annotator.models import Campaign
from annotator.rendering import markdown_html
from annotator.selectors.campaigns import (
    control_spans,
    queue_for,
)
from annotator.services.campaigns import ControlKey, campaign_control_set, campaign_set_labeling
from annotator.views.common import AppRequest, require_researcher
from errors import UserError


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
        except UserError as exc:
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
