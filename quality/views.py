"""The decoys' answer-key page: researchers review, edit, drop or import a campaign's decoys, and have models
explain the decoys and write the planted errors."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotator.models import Campaign, CampaignRun
from annotator.views.common import AppRequest, require_researcher
from corpus.cleaning import INT64_MAX
from errors import UserError
from quality.campaign_audit import AuditBlocked, campaign_audit, campaign_open_audited
from quality.decoy_explaining import decoy_explanations_start, decoy_job_counts
from quality.models import CheckSpan, DecoyExplanationJob, PlantedOutput, PlantedWritingJob
from quality.planted_writing import default_writer, planted_job_counts, planted_writing_start
from quality.services import decoy_drop, decoy_key_choices, decoy_update, decoys_import

MAX_IMPORT_BYTES = 2_000_000


@require_http_methods(["GET", "POST"])
def campaign_decoys(request: AppRequest, pk: int) -> HttpResponse:
    """Each decoy with its output, span, label, explanation and key; an edit form per decoy and an import."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    if request.method == "POST":
        raw = request.POST.get("decoy", "")
        decoy = (CheckSpan.objects.filter(pk=int(raw), campaign=campaign, role=CheckSpan.Role.DECOY).first()
                 if raw.isascii() and raw.isdigit() and int(raw) <= INT64_MAX else None)
        if decoy is None:
            messages.error(request, f"decoy: {raw[:40]!r} is not a decoy of this campaign")
            return redirect("campaign_decoys", pk=campaign.pk)
        try:
            decoy_update(decoy=decoy, explanation=request.POST.get("explanation"), label=request.POST.get("label"),
                         key_explanation=request.POST.get("key_explanation"))
        except UserError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Saved decoy {decoy.pk}.")
        return redirect("campaign_decoys", pk=campaign.pk)
    decoys = (CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY)
              .select_related("span__annotation__item", "campaign_run")
              .order_by("span__annotation__item__position", "span__start"))
    explain_job = DecoyExplanationJob.objects.filter(campaign=campaign).order_by("-created_at", "-pk").first()
    planted_job = PlantedWritingJob.objects.filter(campaign=campaign).order_by("-created_at", "-pk").first()
    planted_total = PlantedOutput.objects.filter(campaign=campaign).count()
    return render(request, "quality/campaign_decoys.html", {
        "campaign": campaign, "decoys": decoys,
        "labels": CampaignRun.objects.filter(campaign=campaign).values_list("label", flat=True),
        "key_choices": decoy_key_choices(), "explain_job": explain_job,
        "explain_counts": decoy_job_counts(explain_job) if explain_job else None,
        "planted_total": planted_total, "planted_job": planted_job,
        "planted_counts": planted_job_counts(planted_job) if planted_job else None,
        "planted_writer": default_writer(campaign) if planted_total and campaign.status == Campaign.Status.DRAFT
        else ("", ""),
    })


@require_POST
def campaign_decoys_explain(request: AppRequest, pk: int) -> HttpResponse:
    """The "Rewrite decoy explanations with the evaluators' models" button: start the job, then show its page."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        job = decoy_explanations_start(campaign=campaign, user=request.user)
    except UserError as exc:
        messages.error(request, str(exc))
        return redirect("campaign_decoys", pk=pk)
    messages.success(request, "The evaluators' models are writing the decoys' explanations; the campaign opens "
                              "once they are done.")
    return redirect("decoy_explanation_job", pk=job.pk)


@require_POST
def campaign_planted_write(request: AppRequest, pk: int) -> HttpResponse:
    """The "Write the planted errors with a model" button (with an optional model and server): start the job, then
    show its page."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        job = planted_writing_start(campaign=campaign, user=request.user, server=request.POST.get("server", ""),
                                    model=request.POST.get("model", ""))
    except UserError as exc:
        messages.error(request, str(exc))
        return redirect("campaign_decoys", pk=pk)
    messages.success(request, f"{job.model} is writing the planted errors; the campaign opens once it is done.")
    return redirect("planted_writing_job", pk=job.pk)


@require_POST
def campaign_decoy_drop(request: AppRequest, pk: int, decoy_pk: int) -> HttpResponse:
    require_researcher(request)
    decoy = get_object_or_404(CheckSpan, pk=decoy_pk, campaign_id=pk, role=CheckSpan.Role.DECOY)
    decoy_drop(decoy=decoy)
    messages.success(request, "Dropped the decoy.")
    return redirect("campaign_decoys", pk=pk)


@require_POST
def campaign_decoys_import(request: AppRequest, pk: int) -> HttpResponse:
    """Import decoys from a JSONL file: one {"item_id", "start", "end", "label", "explanation"} per line
    (`item_id` is the item's external id; optional "severity", "category", "key_explanation")."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    upload = request.FILES.get("file")
    if upload is None or upload.size > MAX_IMPORT_BYTES:
        messages.error(request, "file: choose a JSONL file of at most 2 MB")
        return redirect("campaign_decoys", pk=pk)
    try:
        n = decoys_import(campaign, upload.read().decode("utf-8"))
    except (UserError, UnicodeDecodeError) as exc:
        messages.error(request, f"{exc} - nothing was imported")
    else:
        messages.success(request, f"Imported {n} decoys.")
    return redirect("campaign_decoys", pk=pk)


@require_POST
def campaign_open_view(request: AppRequest, pk: int) -> HttpResponse:
    """The "Open the campaign" button of a draft: annotators may start once the researcher presses it."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    back = "campaign_decoys" if request.POST.get("next") == "decoys" else "campaign_entry"
    try:
        campaign_open_audited(campaign=campaign, user=request.user,
                              accept_audit=request.POST.get("accept_audit") == "1")
    except (AuditBlocked, UserError) as exc:  # the audit blocks, or the decoys' explanations are being written
        messages.error(request, str(exc))
        return redirect(back, pk=pk)
    messages.success(request, "The campaign is open; its annotators can start.")
    return redirect(back, pk=pk)


def campaign_decoys_audit(request: AppRequest, pk: int) -> HttpResponse:
    """The decoy audit's panel (loaded after the page: a first audit takes seconds)."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    return render(request, "quality/_decoy_audit.html", {"campaign": campaign, "audit": campaign_audit(campaign)})
