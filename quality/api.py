"""Quality-check API (researchers and admins): each annotator's vigilance and telemetry, and the decoys."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Status
from pydantic import ValidationError

from accounts.access import require_researcher
from accounts.models import User
from annotator.models import Campaign
from errors import BadRequest
from quality.campaign_audit import campaign_audit
from quality.decoy_explaining import decoy_explanations_start, decoy_job_counts
from quality.models import CheckSpan, DecoyExplanation, DecoyExplanationJob, PlantedWriting, PlantedWritingJob
from quality.planted_writing import planted_job_counts, planted_writing_start
from quality.schemas import (
    DecoyAuditOut,
    DecoyExplanationJobOut,
    DecoyOut,
    PlantedWriteIn,
    PlantedWritingJobOut,
    ReopenOut,
    VigilanceOut,
)
from quality.selectors.vigilance import campaign_checks
from quality.services import qualification_reopen

router = Router(tags=["campaigns"])


@router.get("/campaigns/{campaign_id}/vigilance", response=list[VigilanceOut], operation_id="campaign_vigilance")
def campaign_vigilance(request: HttpRequest, campaign_id: int):
    """Per annotator: decoys rejected and planted errors found (Wilson 95% intervals), telemetry, qualification,
    and whether the campaign's rules flag them (docs/guides/quality-checks.md)."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return [row.as_dict() for row in campaign_checks(campaign)]


@router.get("/campaigns/{campaign_id}/decoys", response=list[DecoyOut], operation_id="list_decoys")
def list_decoys(request: HttpRequest, campaign_id: int):
    """The campaign's decoys with their output, span, evaluator label, explanation and key."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return [decoy_out(d) for d in decoys_of(campaign)]


@router.get("/campaigns/{campaign_id}/decoys/audit", response=DecoyAuditOut, operation_id="decoy_audit")
def decoy_audit(request: HttpRequest, campaign_id: int):
    """Could a classifier tell the decoys from real machine spans by their cards? Cross-validated ROC AUC with a
    bootstrap interval and the features that give decoys away (docs/guides/quality-checks.md)."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return campaign_audit(campaign).as_dict()


@router.post("/campaigns/{campaign_id}/decoys/explain", response={202: DecoyExplanationJobOut},
             operation_id="explain_decoys")
def explain_decoys(request: HttpRequest, campaign_id: int):
    """Start the job that has each decoy of a draft explained by its evaluator's own model, in its run's answer
    format (docs/guides/quality-checks.md, "How decoys are written"); 409 unless the campaign is a draft with
    decoys whose runs can be asked and no such job unfinished. The campaign cannot open until the job ends."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return Status(202, decoy_job_out(decoy_explanations_start(campaign=campaign, user=request.user)))


@router.get("/decoy-explanations/{job_id}", response=DecoyExplanationJobOut,
            operation_id="retrieve_decoy_explanation_job")
def retrieve_decoy_explanation_job(request: HttpRequest, job_id: int):
    """A decoy explanation job's status and progress, and how many decoys it rewrote, got an unusable answer for
    (their explanations are kept) or kept as written (no model at hand)."""
    require_researcher(request)
    return decoy_job_out(get_object_or_404(DecoyExplanationJob, pk=job_id))


@router.post("/campaigns/{campaign_id}/planted/write", response={201: PlantedWritingJobOut},
             operation_id="write_planted_errors",
             openapi_extra={"requestBody": {"required": False, "content": {"application/json": {
                 "schema": PlantedWriteIn.model_json_schema()}}}})
def write_planted_errors(request: HttpRequest, campaign_id: int):
    """Start the job that has a model write the planted error of each planted output of a draft into its original
    output (docs/guides/quality-checks.md, "Planted errors written by a model"). Optional JSON body
    `{"server": "...", "model": "..."}`; either left out is the campaign's first evaluator run's. 400 naming the field
    for a bad body; 409 unless the campaign is a draft with planted outputs and no such job unfinished. The campaign
    cannot open until the job ends."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    body = _write_body(request)
    job = planted_writing_start(campaign=campaign, user=request.user, server=body.server, model=body.model)
    return Status(201, planted_job_out(job))


@router.get("/planted-writing/{job_id}", response=PlantedWritingJobOut, operation_id="retrieve_planted_writing_job")
def retrieve_planted_writing_job(request: HttpRequest, job_id: int):
    """A planted-error writing job's status and progress, and how many planted outputs it rewrote, got an unusable
    answer for or kept as made (each of those keeps its rule-made planted error)."""
    require_researcher(request)
    return planted_job_out(get_object_or_404(PlantedWritingJob, pk=job_id))


@router.post("/campaigns/{campaign_id}/qualification/{username}/reopen", response={200: ReopenOut},
             operation_id="reopen_training")
def reopen_training(request: HttpRequest, campaign_id: int, username: str):
    """Re-open the training items of an annotator below the pass mark (their verdicts stay, to be changed)."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    annotator = get_object_or_404(User.objects.filter(assignments__campaign=campaign).distinct(), username=username)
    n = qualification_reopen(campaign=campaign, annotator=annotator)
    return ReopenOut(annotator=annotator.username, reopened=n)


def decoys_of(campaign: Campaign) -> list[CheckSpan]:
    return list(
        CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY)
        .select_related("span__annotation__item", "campaign_run").order_by("span__annotation__item__position",
                                                                          "span__start")
    )


def decoy_out(decoy: CheckSpan) -> DecoyOut:
    item = decoy.span.annotation.item
    return DecoyOut(
        id=decoy.pk, item_id=item.pk, external_id=item.external_id, output=item.output, start=decoy.span.start,
        end=decoy.span.end, text=decoy.span.text, label=decoy.campaign_run.label, aspect=decoy.span.annotation.aspect,
        explanation=decoy.span.explanation, severity=decoy.span.severity, category=decoy.span.category,
        key={"span_verdict": decoy.key_span_verdict, "explanation_verdict": decoy.key_explanation_verdict},
    )


def decoy_job_out(job: DecoyExplanationJob) -> DecoyExplanationJobOut:
    counts = decoy_job_counts(job)
    return DecoyExplanationJobOut(
        id=job.pk, campaign_id=job.campaign_id, status=job.status, done=job.done, total=job.total,
        message=job.message, automatic=job.automatic, simulated=job.simulated,
        rewritten=counts[DecoyExplanation.Outcome.REWRITTEN], unusable=counts[DecoyExplanation.Outcome.UNUSABLE],
        kept=counts[DecoyExplanation.Outcome.KEPT],
    )


def _write_body(request: HttpRequest) -> PlantedWriteIn:
    """The optional body of starting the planted-error job: absent (or not JSON, as a bare POST sends) means the
    defaults; a JSON body must be the object the schema describes (400 naming the field otherwise)."""
    if request.content_type != "application/json" or not request.body.strip():
        return PlantedWriteIn()
    try:
        return PlantedWriteIn.model_validate_json(request.body)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "body"
        raise BadRequest(f"{where}: {problem['msg']}", field=where) from None


def planted_job_out(job: PlantedWritingJob) -> PlantedWritingJobOut:
    counts = planted_job_counts(job)
    return PlantedWritingJobOut(
        id=job.pk, campaign_id=job.campaign_id, status=job.status, done=job.done, total=job.total,
        message=job.message, server=job.server, model=job.model, automatic=job.automatic, simulated=job.simulated,
        rewritten=counts[PlantedWriting.Outcome.REWRITTEN], unusable=counts[PlantedWriting.Outcome.UNUSABLE],
        kept=counts[PlantedWriting.Outcome.KEPT],
    )
