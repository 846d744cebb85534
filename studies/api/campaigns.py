"""Campaigns in the API: create, list, retrieve, open, and the control items' accuracy."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status
from ninja.pagination import paginate
from pydantic import ValidationError

from accounts.access import require_researcher
from accounts.models import User
from annotator.access import campaign_for_user
from annotator.models import Assignment, Campaign
from annotator.schemas import CampaignDetailOut, CampaignIn, CampaignOut, CampaignSummaryOut, ControlAccuracyOut
from annotator.selectors.campaigns import campaign_run_labels, campaigns_visible_to, control_accuracy
from annotator.services.campaigns import ControlKey, campaign_name_clash
from annotator.services.routing import RoutingSpec, campaign_route_top_up
from annotator.services.sampling import SampleSpec
from corpus.models import Dataset
from errors import Conflict, UserError
from evaluation.models import EvaluatorRun
from quality.campaign_audit import campaign_open_audited
from quality.engine import power
from quality.schemas import CampaignOpenIn
from quality.services import CheckSettings
from studies.api.participants import LinkOut, link_out, link_settings_from
from studies.design import checks_power_of
from studies.models import SetupReport, StudyLink
from studies.setup import CampaignSpec, campaign_create, campaign_dry_run

router = Router(tags=["campaigns"])


class FlagChancesOut(Schema):
    """The probability that the check flags each kind of participant (quality.engine.power)."""

    accept_all: float
    reject_all: float
    random: float


class CheckPowerOut(Schema):
    """One check's power before launch: known answers a participant meets, the chance it flags each kind of
    participant, and the smallest change that lets it flag one who fails every check (null when it does)."""

    check: str  # decoys, planted or qualification
    met_per_participant: float
    p_flag: FlagChancesOut
    smallest_fix: str | None


def _power(rows) -> list[CheckPowerOut]:
    return [CheckPowerOut(**row.as_dict()) for row in rows]


class CampaignCreatedOut(CampaignOut):
    status: str  # "draft" while its decoys wait for review, else "open"
    warnings: list[str]  # what the design promises but cannot keep, with numbers (also on the campaign page)
    checks_power: list[CheckPowerOut]
    speed_rule: str  # the rubber-stamp rule, which depends on speed rather than design: a condition beside them


class TallyOut(Schema):
    asked: int
    made: int
    why: str


class ChecksMadeOut(Schema):
    """Known answers the creation asked for and made (decoys proposed, planted outputs), with why fewer."""

    decoys: TallyOut
    planted: TallyOut


class SetupReportOut(Schema):
    """A dry run's answer: what creation would make and say; nothing is created."""

    dry_run: bool
    warnings: list[str]
    checks_made: ChecksMadeOut
    checks_power: list[CheckPowerOut]
    speed_rule: str
    refusal: dict[str, Any] | None  # {"detail", "field"}: the refusal creation would answer for weak checks


class CampaignSettingsOut(CampaignDetailOut):
    """A campaign with its study settings; for annotators the settings are null (knowing the checks' shares
    would help to game them)."""

    control_arm: float | None
    decoys: float | None
    planted: float | None
    vigilance_min: float | None
    exclude_flagged: bool | None
    qualification: dict[str, Any] | None  # {"items": [item ids], "pass": 0.8}, null without training
    link: LinkOut | None
    checks_made: ChecksMadeOut | None
    checks_power: list[CheckPowerOut] | None
    warnings: list[str] | None


def _checks_made(report: SetupReport | None) -> ChecksMadeOut | None:
    if report is None:
        return None
    return ChecksMadeOut(
        decoys=TallyOut(asked=report.decoys_asked, made=report.decoys_made, why=report.decoys_why),
        planted=TallyOut(asked=report.planted_asked, made=report.planted_made, why=report.planted_why),
    )


@router.post("/campaigns", response={201: CampaignCreatedOut, 200: SetupReportOut}, operation_id="create_campaign")
def create_campaign(request: HttpRequest, payload: CampaignIn):
    """Create a campaign (researchers and admins), optionally with control items and their key; one with
    decoys starts as a draft until `open_campaign`. `warnings` lists what the design cannot keep as asked (a
    cap the pool cannot use, checks that could not all be made, an arm that cannot be crossed); a link nobody
    could ever join is a 422 naming `link`. `checks_power` says, per check, how many known answers a participant
    meets and how likely each kind of participant is to be flagged; a link study with a fail code whose checks
    can flag nobody is a 422 naming the fields and the smallest fix, unless `accept_weak_checks`. With
    `dry_run` it answers 200 with the set-up report and creates nothing."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=payload.dataset_id)
    runs = list(EvaluatorRun.objects.filter(pk__in=payload.run_ids))
    if len(runs) != len(set(payload.run_ids)):
        raise UserError("run_ids: unknown run id(s)", field="run_ids")
    users = {u.username: u for u in User.objects.filter(username__in=payload.annotators, is_active=True)}
    missing = [name for name in payload.annotators if name not in users]
    if missing:
        raise UserError(f"annotators: unknown or inactive users: {', '.join(missing)}", field="annotators")
    reviewers = list(User.objects.filter(username__in=payload.reviewers, is_active=True))
    if unknown := sorted(set(payload.reviewers) - {u.username for u in reviewers}):
        raise UserError(f"reviewers: unknown or inactive users: {', '.join(unknown)}", field="reviewers")
    sample = SampleSpec(**payload.sample.dict()) if payload.sample else None
    routing = RoutingSpec(**payload.routing.dict(), seed=payload.seed) if payload.routing else None
    link = link_settings_from(payload)
    checks = CheckSettings(
        decoys=payload.decoys, planted=payload.planted, vigilance_min=payload.vigilance_min,
        qualification_items=tuple(payload.qualification.items) if payload.qualification else (),
        qualification_pass=payload.qualification.pass_ if payload.qualification else 0.8,
        exclude_flagged=payload.exclude_flagged, planted_near_duplicates=payload.planted_near_duplicates,
    )
    spec = CampaignSpec(
        name=payload.name, dataset=dataset, runs=runs, annotators=[users[n] for n in payload.annotators],
        aspects=payload.aspects, annotators_per_item=payload.annotators_per_item,
        guidelines=payload.guidelines, seed=payload.seed, item_ids=payload.item_ids,
        control_item_ids=payload.control_item_ids, reviewers=reviewers,
        sample=sample, control_arm=payload.control_arm, link=link, checks=checks, routing=routing,
        protocol=payload.protocol, protocol_options=payload.protocol_options,
        control_keys=[ControlKey(**k.dict()) for k in payload.control_verdicts],
        accept_weak_checks=payload.accept_weak_checks)
    if payload.dry_run:
        preview = campaign_dry_run(spec, created_by=request.user)
        return Status(200, SetupReportOut(
            dry_run=True, warnings=preview.warnings, checks_made=ChecksMadeOut(
                decoys=TallyOut(**vars(preview.checks_made.decoys)),
                planted=TallyOut(**vars(preview.checks_made.planted))),
            checks_power=_power(preview.checks_power), speed_rule=power.SPEED_RULE,
            refusal=preview.refusal.body() if preview.refusal else None))
    try:
        campaign = campaign_create(spec, created_by=request.user)
    except IntegrityError as exc:
        if not campaign_name_clash(exc):  # any other constraint is a defect: it answers as one, with its own words
            raise
        raise Conflict(f"name: a campaign named {payload.name!r} exists", field="name") from None
    return Status(201, CampaignCreatedOut(
        id=campaign.pk, name=campaign.name, dataset_id=dataset.pk, aspects=campaign.aspects,
        annotators_per_item=campaign.annotators_per_item, n_assignments=campaign.assignments.count(),
        labels={label: run_id for run_id, label in campaign_run_labels(campaign.pk).items()},
        status=campaign.status, warnings=campaign.warnings, checks_power=_power(campaign.checks_power),
        speed_rule=power.SPEED_RULE,
    ))


@router.get("/campaigns/{campaign_id}/control-accuracy", response=list[ControlAccuracyOut],
            operation_id="campaign_control_accuracy")
@paginate
def campaign_control_accuracy(request: HttpRequest, campaign_id: int):
    """Each annotator's agreement with the known verdicts on control items (researchers and admins only)."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return [
        ControlAccuracyOut(annotator=r.annotator, spans=r.spans, span_correct=r.span_correct,
                           span_percent=r.span_percent, explanations=r.explanations,
                           explanation_correct=r.explanation_correct, explanation_percent=r.explanation_percent)
        for r in control_accuracy(campaign)
    ]


@router.get("/campaigns", response=list[CampaignSummaryOut], operation_id="list_campaigns")
@paginate
def list_campaigns(request: HttpRequest):
    """Campaigns the caller may see: all of them for researchers, those with own assignments for annotators."""
    return [
        CampaignSummaryOut(id=c.pk, name=c.name, dataset_id=c.dataset_id, status=c.status, aspects=c.aspects,
                           annotators_per_item=c.annotators_per_item)
        for c in campaigns_visible_to(request.user).order_by("pk")
    ]


@router.get("/campaigns/{campaign_id}", response=CampaignSettingsOut, operation_id="retrieve_campaign")
def retrieve_campaign(request: HttpRequest, campaign_id: int):
    """A campaign with its guidelines (markdown) and progress; the caller's own progress for annotators. For
    researchers and admins also its study settings: the arm, the checks, the participant link (the object of
    `GET /api/campaigns/ID/link`, or null), the checks made at creation and the creation's warnings."""
    campaign = campaign_for_user(request.user, campaign_id)
    assignments = campaign.assignments.all()
    if not request.user.sees_everything:
        assignments = assignments.filter(annotator=request.user)
    out = {
        "id": campaign.pk, "name": campaign.name, "dataset_id": campaign.dataset_id, "status": campaign.status,
        "aspects": campaign.aspects, "annotators_per_item": campaign.annotators_per_item,
        "guidelines": campaign.guidelines, "n_assignments": assignments.count(),
        "n_done": assignments.filter(status=Assignment.Status.DONE).count(),
        **dict.fromkeys(("control_arm", "decoys", "planted", "vigilance_min", "exclude_flagged", "qualification",
                         "link", "checks_made", "checks_power", "warnings")),
    }
    if request.user.sees_everything:
        link = StudyLink.objects.filter(campaign=campaign).first()
        report = SetupReport.objects.filter(campaign=campaign).first()
        out.update(
            control_arm=campaign.control_arm, decoys=campaign.decoys, planted=campaign.planted,
            vigilance_min=campaign.vigilance_min, exclude_flagged=campaign.exclude_flagged,
            qualification=campaign.qualification or None, link=link_out(request, link) if link else None,
            checks_made=_checks_made(report), warnings=report.warnings if report else [],
            checks_power=_power(checks_power_of(campaign)),
        )
    return out


class TopUpRunOut(Schema):
    run_id: int
    planned: float = Field(description="Expected judgments of this batch (0: none needed).")
    drawn: int
    reached: str | None = Field(description="Why no batch was drawn for this evaluator (null when one was).")


class TopUpOut(Schema):
    batch: int | None = Field(description="The batch drawn; null when no evaluator needed one.")
    evaluators: list[TopUpRunOut]
    items: list[int] = Field(description="Outputs that got work: reopened or dealt to registered annotators.")


@router.post("/campaigns/{campaign_id}/routing/top-up", response=TopUpOut, operation_id="create_routing_top_up")
def create_routing_top_up(request: HttpRequest, campaign_id: int):
    """Draw the next batch of an active routed campaign now (finishing an item does so by itself once every drawn
    span has a label): each evaluator that still needs judgments gets its spans not drawn yet with probabilities
    from the calibrated predictor's uncertainty, none below `min_probability`, the whole planned to reach
    `target_ci_width` or to spend `budget_spans`. 409 while a drawn span has no expert verdict; 422 naming
    `routing.design` for a campaign without an active design."""
    require_researcher(request)
    plan = campaign_route_top_up(campaign=get_object_or_404(Campaign, pk=campaign_id))
    return TopUpOut(batch=plan.batch, items=plan.items, evaluators=[
        TopUpRunOut(run_id=run_id, planned=planned, drawn=plan.drawn.get(run_id, 0), reached=plan.reached.get(run_id))
        for run_id, planned in sorted(plan.planned.items())])


@router.post("/campaigns/{campaign_id}/open", response=CampaignSummaryOut, operation_id="open_campaign",
             openapi_extra={"requestBody": {"required": False, "content": {"application/json": {
                 "schema": CampaignOpenIn.model_json_schema()}}}})
def open_campaign(request: HttpRequest, campaign_id: int):
    """Open a draft campaign (one with decoys starts as a draft until they are reviewed); 409 unless a draft,
    and 409 naming the AUC when the decoy audit tells decoys apart above 0.75, unless the optional JSON body says
    `{"accept_audit": true}`."""
    require_researcher(request)
    campaign = campaign_open_audited(campaign=get_object_or_404(Campaign, pk=campaign_id), user=request.user,
                                     accept_audit=_open_body(request).accept_audit)
    return CampaignSummaryOut(id=campaign.pk, name=campaign.name, dataset_id=campaign.dataset_id,
                              status=campaign.status, aspects=campaign.aspects,
                              annotators_per_item=campaign.annotators_per_item)


def _open_body(request: HttpRequest) -> CampaignOpenIn:
    """The optional body of opening: absent (or not JSON, as a bare POST sends) means no acceptance."""
    if request.content_type != "application/json" or not request.body.strip():
        return CampaignOpenIn()
    try:
        return CampaignOpenIn.model_validate_json(request.body)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "body"
        raise UserError(f"{where}: {problem['msg']}", field=where) from exc
