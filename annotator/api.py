"""Annotation API: datasets, items, exports, and the annotation work and campaigns (the UI's twins)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.http import HttpRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from ninja import File, Form, Router, Status
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.pagination import paginate

from accounts.access import require_researcher
from accounts.models import User
from accounts.services.settings import user_set_auto_advance
from annotator.access import added_span_for_user, assignment_for_user, assignment_to_edit, campaign_for_user
from annotator.api_participants import link_settings_from
from annotator.engine.quality import clamp_ms
from annotator.models import Assignment, Campaign, SpanJudgment
from annotator.phases import shows_machine_spans
from annotator.schemas import (
    AddedSpanIn,
    AddedSpanOut,
    AddedSpanPatchIn,
    AnnotationImportOut,
    AssignmentDetailOut,
    AssignmentOut,
    CampaignDetailOut,
    CampaignIn,
    CampaignOut,
    CampaignSummaryOut,
    ControlAccuracyOut,
    DatasetOut,
    ErrorOut,
    FinishIn,
    ImportOut,
    ItemOut,
    JudgmentFieldsIn,
    JudgmentIn,
    JudgmentOut,
    SettingsIn,
    SettingsOut,
    TimeIn,
    UndoOut,
    WorkItemOut,
)
from annotator.selectors import (
    added_spans,
    campaign_run_labels,
    campaigns_visible_to,
    control_accuracy,
    datasets_for_home,
    item_errors,
    judged_span_by_handle,
    span_handle,
)
from annotator.services.added_spans import added_span_create, added_span_delete, added_span_update
from annotator.services.assignments import AssignmentError, assignment_add_time, assignment_finish
from annotator.services.campaigns import ControlKey, campaign_control_set, campaign_create
from annotator.services.checks import CheckSettings
from annotator.services.control_arm import assignment_reveal
from annotator.services.exporting import ExportFilter, export_csv, export_jsonl
from annotator.services.judgments import judgment_set
from annotator.services.sampling import SampleSpec
from annotator.services.undo import StepResult, action_redo, action_undo
from annotator.services.uploads import UploadTooLarge, upload_annotations_import, upload_import
from corpus.formats import FormatError, named
from corpus.models import Dataset, ErrorSpan
from corpus.services.annotation_import import annotator_map
from errors import Conflict, UserError
from evaluation.models import EvaluatorRun

router = Router(tags=["datasets"])



@router.get("/datasets", response=list[DatasetOut], operation_id="list_datasets")
@paginate
def list_datasets(request: HttpRequest):
    require_researcher(request)
    return [
        DatasetOut(
            id=d.pk, name=d.name, task=d.task.slug, input_headers=d.input_headers, output_header=d.output_header,
            score_aspects=d.score_aspects, n_items=d.n_items,
        )
        for d in datasets_for_home()
    ]


@router.post("/datasets/import", response={201: ImportOut}, operation_id="import_items")
def import_items(
    request: HttpRequest, file: File[UploadedFile], dataset: Form[str], task: Form[str], source: Form[str] = "gold",
    aspect: Form[str] = "",
):
    """Import an item file (multipart upload), exactly like `manage.py import_items`; 422 names line and field."""
    require_researcher(request)
    try:
        report = upload_import(upload=file, dataset_name=dataset.strip(), task_slug=task, source=source.strip(),
                               aspect=aspect.strip(), user=request.user)
    except FormatError as exc:
        raise HttpError(413 if isinstance(exc, UploadTooLarge) else 422,
                        f"{named(exc, file.name or 'the upload')} - nothing was imported") from None
    ds = Dataset.objects.get(name=dataset.strip())
    return Status(201, ImportOut(dataset_id=ds.pk, dataset=ds.name, created_items=report.created_items,
                                 reused_items=report.reused_items, annotations=report.annotations,
                                 spans=report.spans, judgments=report.judgments))


@router.get("/datasets/{dataset_id}/items", response=list[ItemOut], operation_id="list_items")
@paginate
def list_items(request: HttpRequest, dataset_id: int):
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return dataset.items.filter(derived_from__isnull=True).order_by("position")


@router.get("/datasets/{dataset_id}/export", operation_id="export_dataset")
def export_dataset(request: HttpRequest, dataset_id: int, format: str = "jsonl", campaign: int | None = None):
    """Stream the dataset in the `export_items` format (jsonl or csv; see the docs' Export formats); `campaign`
    keeps that campaign's items and judgments and takes the consensus from it (as `--campaign` does), else the
    consensus comes from the dataset's labeling campaign."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if campaign is not None:
        get_object_or_404(Campaign, pk=campaign, dataset=dataset)
    keep = ExportFilter(campaign_id=campaign)
    if format == "csv":
        return StreamingHttpResponse(export_csv(dataset, keep), content_type="text/csv; charset=utf-8")
    return StreamingHttpResponse(export_jsonl(dataset, keep), content_type="application/x-ndjson; charset=utf-8")


# ---- annotation work: the twins of the annotation screen ---------------------------------------------------


def _judgment_out(judgment: SpanJudgment | None) -> JudgmentOut | None:
    if judgment is None:
        return None
    return JudgmentOut(
        span_id=span_handle(judgment.assignment_id, judgment.span_id), span_verdict=judgment.span_verdict,
        explanation_verdict=judgment.explanation_verdict, flags=judgment.flags(), comment=judgment.comment,
        corrected_severity=judgment.corrected_severity, complete=judgment.is_complete(), version=judgment.version,
    )


def _assignment_out(a: Assignment) -> AssignmentOut:
    return AssignmentOut(id=a.pk, campaign_id=a.campaign_id, campaign=a.campaign.name, order=a.order,
                         status=a.status, seconds_spent=a.seconds_spent)


def _added_out(span: ErrorSpan) -> AddedSpanOut:
    return AddedSpanOut(id=span.pk, start=span.start, end=span.end, text=span.text, aspect=span.annotation.aspect,
                        category=span.category, severity=span.severity, note=span.explanation)


@router.get("/assignments", response=list[AssignmentOut], operation_id="list_assignments", tags=["annotation"])
@paginate
def list_assignments(request: HttpRequest, campaign_id: int | None = None, status: str | None = None):
    """The caller's own assignments in their order (researchers too: this is a work list, not an overview)."""
    rows = Assignment.objects.filter(annotator=request.user).select_related("campaign")
    if campaign_id is not None:
        rows = rows.filter(campaign_id=campaign_id)
    if status:
        rows = rows.filter(status=status)
    return [_assignment_out(a) for a in rows.order_by("campaign_id", "order")]


@router.get("/assignments/{assignment_id}", response=AssignmentDetailOut, operation_id="retrieve_assignment",
            tags=["annotation"])
def retrieve_assignment(request: HttpRequest, assignment_id: int):
    """The item (inputs and output), its machine errors under neutral labels with the assignee's judgments,
    and the errors the assignee added."""
    assignment = assignment_for_user(request.user, assignment_id)
    rows, _ = item_errors(assignment)
    errors = [
        ErrorOut(span_id=r.handle, number=r.number, label=r.label, text=r.span.text, start=r.span.start,
                 end=r.span.end, match=r.span.match, ambiguous=r.span.ambiguous, explanation=r.span.explanation,
                 severity=r.span.severity, category=r.span.category, judgment=_judgment_out(r.judgment))
        for r in rows
    ]
    item = assignment.item
    marking = not shows_machine_spans(assignment.phase)  # no machine span, and no count of them either
    return AssignmentDetailOut(
        **_assignment_out(assignment).dict(), phase=assignment.phase, aspects=list(assignment.campaign.aspects or []),
        item=WorkItemOut(inputs={k: str(v) for k, v in item.inputs.items()}, output=item.output),
        errors=errors, added_spans=[_added_out(s) for s in added_spans(assignment)],
        n_complete=None if marking else sum(r.is_complete for r in rows), n_total=None if marking else len(rows),
    )


@router.post("/assignments/{assignment_id}/reveal", response=AssignmentDetailOut, operation_id="reveal_assignment",
             tags=["annotation"])
def reveal_assignment(request: HttpRequest, assignment_id: int, payload: FinishIn | None = None):
    """End the marking phase of a control-arm output (the screen's Done marking): the errors marked so far
    stay fixed, and the machine errors appear. 409 once marking has ended; 404 on an output not in the arm."""
    assignment = assignment_to_edit(request.user, assignment_id)
    assignment_reveal(assignment=assignment, user=request.user, seconds=payload.seconds if payload else 0)
    return retrieve_assignment(request, assignment_id)


def _ms(value: object) -> int | None:
    try:
        return clamp_ms(value)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _set_fields(request: HttpRequest, assignment_id: int, span_id: int, changes: dict) -> JudgmentOut:
    assignment = assignment_to_edit(request.user, assignment_id)
    span, _ = judged_span_by_handle(assignment, span_id)
    expected = changes.pop("version", None)
    ms = _ms(changes.pop("ms", None))
    if not changes:
        raise UserError("give at least one field to set")
    # a refusal is a UserError: 409 for a stale version (StaleJudgment), 422 for a bad value (config.api)
    judgment = judgment_set(assignment=assignment, span=span, user=request.user, changes=changes,
                            expected_version=expected, ms=ms)
    return _judgment_out(judgment)


@router.post("/assignments/{assignment_id}/judgments", response=JudgmentOut, operation_id="create_judgment",
             tags=["annotation"])
def create_judgment(request: HttpRequest, assignment_id: int, payload: JudgmentIn):
    """Set verdicts, flags, comment or severity of one machine error (creates the judgment on first use)."""
    changes = payload.dict(exclude_unset=True)
    changes.pop("span_id")
    return _set_fields(request, assignment_id, payload.span_id, changes)


@router.patch("/assignments/{assignment_id}/judgments/{span_id}", response=JudgmentOut,
              operation_id="update_judgment", tags=["annotation"])
def update_judgment(request: HttpRequest, assignment_id: int, span_id: int, payload: JudgmentFieldsIn):
    return _set_fields(request, assignment_id, span_id, payload.dict(exclude_unset=True))


def _step_out(result: StepResult | None) -> UndoOut:
    if result is None:
        return UndoOut(undone=False)
    field = result.action.payload.get("field", "added_span")
    judgment = _judgment_out(result.judgment) if result.judgment is not None else None
    return UndoOut(undone=True, field=field, judgment=judgment, message=result.message, reopened=result.reopened)


@router.post("/assignments/{assignment_id}/undo", response=UndoOut, operation_id="undo_judgment",
             tags=["annotation"])
def undo_judgment(request: HttpRequest, assignment_id: int):
    """Reverse the caller's newest action on this assignment of any kind (like pressing u on the screen)."""
    assignment = assignment_to_edit(request.user, assignment_id)
    return _step_out(action_undo(assignment=assignment, user=request.user))


@router.post("/assignments/{assignment_id}/redo", response=UndoOut, operation_id="redo_judgment",
             tags=["annotation"])
def redo_judgment(request: HttpRequest, assignment_id: int):
    """Replay the caller's most recently undone action (like Shift+U on the screen)."""
    assignment = assignment_to_edit(request.user, assignment_id)
    return _step_out(action_redo(assignment=assignment, user=request.user))


@router.post("/assignments/{assignment_id}/added-spans", response={201: AddedSpanOut},
             operation_id="create_added_span", tags=["annotation"])
def create_added_span(request: HttpRequest, assignment_id: int, payload: AddedSpanIn):
    """Add a missed error by character offsets into the output (end exclusive); the text is taken from them."""
    assignment = assignment_to_edit(request.user, assignment_id)
    fields = payload.dict()
    ms = _ms(fields.pop("ms", None))
    span = added_span_create(assignment=assignment, user=request.user, **fields, ms=ms)
    return Status(201, _added_out(span))


@router.patch("/added-spans/{span_id}", response=AddedSpanOut, operation_id="update_added_span",
              tags=["annotation"])
def update_added_span(request: HttpRequest, span_id: int, payload: AddedSpanPatchIn):
    span, assignment = added_span_for_user(request.user, span_id)
    fields = payload.dict(exclude_unset=True)
    ms = _ms(fields.pop("ms", None))
    added_span_update(span=span, assignment=assignment, user=request.user, **fields, ms=ms)
    return _added_out(span)


@router.delete("/added-spans/{span_id}", response={204: None}, operation_id="delete_added_span",
               tags=["annotation"])
def delete_added_span(request: HttpRequest, span_id: int):
    span, assignment = added_span_for_user(request.user, span_id)
    added_span_delete(span=span, assignment=assignment, user=request.user)
    return Status(204, None)


@router.post("/assignments/{assignment_id}/finish", response=AssignmentOut, operation_id="finish_assignment",
             tags=["annotation"])
def finish_assignment(request: HttpRequest, assignment_id: int, payload: FinishIn | None = None):
    """Mark the item done; 422 while a machine error lacks a span or an explanation verdict."""
    assignment = assignment_to_edit(request.user, assignment_id)
    done = assignment_finish(assignment=assignment, user=request.user, seconds=payload.seconds if payload else 0)
    return _assignment_out(done)


@router.post("/campaigns", response={201: CampaignOut}, operation_id="create_campaign", tags=["campaigns"])
def create_campaign(request: HttpRequest, payload: CampaignIn):
    """Create a campaign (researchers and admins), optionally with control items and their key; one with
    decoys starts as a draft until `open_campaign`."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=payload.dataset_id)
    runs = list(EvaluatorRun.objects.filter(pk__in=payload.run_ids))
    if len(runs) != len(set(payload.run_ids)):
        raise UserError("run_ids: unknown run id(s)")
    users = {u.username: u for u in User.objects.filter(username__in=payload.annotators, is_active=True)}
    missing = [name for name in payload.annotators if name not in users]
    if missing:
        raise UserError(f"annotators: unknown or inactive users: {', '.join(missing)}")
    reviewers = list(User.objects.filter(username__in=payload.reviewers, is_active=True))
    if unknown := sorted(set(payload.reviewers) - {u.username for u in reviewers}):
        raise UserError(f"reviewers: unknown or inactive users: {', '.join(unknown)}")
    sample = SampleSpec(**payload.sample.dict()) if payload.sample else None
    link = link_settings_from(payload)
    checks = CheckSettings(
        decoys=payload.decoys, planted=payload.planted, vigilance_min=payload.vigilance_min,
        qualification_items=tuple(payload.qualification.items) if payload.qualification else (),
        qualification_pass=payload.qualification.pass_ if payload.qualification else 0.8,
        exclude_flagged=payload.exclude_flagged,
    )
    try:
        with transaction.atomic():
            campaign = campaign_create(
                name=payload.name, dataset=dataset, runs=runs, annotators=[users[n] for n in payload.annotators],
                aspects=payload.aspects, annotators_per_item=payload.annotators_per_item,
                guidelines=payload.guidelines, seed=payload.seed, item_ids=payload.item_ids,
                control_item_ids=payload.control_item_ids, created_by=request.user, reviewers=reviewers,
                sample=sample, control_arm=payload.control_arm, link=link, checks=checks,
            )
            if payload.control_verdicts:
                campaign_control_set(campaign=campaign, keys=[ControlKey(**k.dict()) for k in payload.control_verdicts])
    except IntegrityError:
        raise Conflict(f"name: a campaign named {payload.name!r} exists") from None
    return Status(201, CampaignOut(
        id=campaign.pk, name=campaign.name, dataset_id=dataset.pk, aspects=campaign.aspects,
        annotators_per_item=campaign.annotators_per_item, n_assignments=campaign.assignments.count(),
        labels={label: run_id for run_id, label in campaign_run_labels(campaign.pk).items()},
    ))


@router.get("/campaigns/{campaign_id}/control-accuracy", response=list[ControlAccuracyOut],
            operation_id="campaign_control_accuracy", tags=["campaigns"])
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


@router.patch("/me/settings", response=SettingsOut, operation_id="update_settings", tags=["annotation"])
def update_settings(request: HttpRequest, payload: SettingsIn):
    """The twin of the item screen's auto-advance switch."""
    if payload.auto_advance is not None:
        user_set_auto_advance(user=request.user, on=payload.auto_advance)
    return SettingsOut(auto_advance=request.user.auto_advance)


@router.get("/campaigns", response=list[CampaignSummaryOut], operation_id="list_campaigns", tags=["campaigns"])
@paginate
def list_campaigns(request: HttpRequest):
    """Campaigns the caller may see: all of them for researchers, those with own assignments for annotators."""
    return [
        CampaignSummaryOut(id=c.pk, name=c.name, dataset_id=c.dataset_id, status=c.status, aspects=c.aspects,
                           annotators_per_item=c.annotators_per_item)
        for c in campaigns_visible_to(request.user).order_by("pk")
    ]


@router.get("/campaigns/{campaign_id}", response=CampaignDetailOut, operation_id="retrieve_campaign",
            tags=["campaigns"])
def retrieve_campaign(request: HttpRequest, campaign_id: int):
    """A campaign with its guidelines (markdown) and progress; the caller's own progress for annotators."""
    campaign = campaign_for_user(request.user, campaign_id)
    assignments = campaign.assignments.all()
    if not request.user.sees_everything:
        assignments = assignments.filter(annotator=request.user)
    return CampaignDetailOut(
        id=campaign.pk, name=campaign.name, dataset_id=campaign.dataset_id, status=campaign.status,
        aspects=campaign.aspects, annotators_per_item=campaign.annotators_per_item, guidelines=campaign.guidelines,
        n_assignments=assignments.count(), n_done=assignments.filter(status=Assignment.Status.DONE).count(),
    )


@router.post("/assignments/{assignment_id}/time", response={204: None}, operation_id="add_assignment_time",
             tags=["annotation"])
def add_assignment_time(request: HttpRequest, assignment_id: int, payload: TimeIn):
    """Report active working seconds on an item (the screen's timer); 409 once the campaign is closed."""
    assignment = assignment_to_edit(request.user, assignment_id)
    try:
        assignment_add_time(assignment=assignment, user=request.user, seconds=payload.seconds)
    except AssignmentError as exc:
        raise HttpError(409, str(exc)) from None
    return Status(204, None)


@router.post("/datasets/{dataset_id}/annotations", response={201: AnnotationImportOut},
             operation_id="import_annotations")
def import_annotations(
    request: HttpRequest, dataset_id: int, file: File[UploadedFile], source: Form[str],
    format: Form[str] = "jsonl", skip_bad_spans: Form[bool] = False, split: Form[str] = "",
    map_annotator: Form[list[str] | None] = None,
):
    """Import another tool's annotations of this dataset's items, exactly like `manage.py import_annotations`
    (`split` and `map_annotator` - repeated "ID=NAME" fields - are its --split and --map-annotator);
    422 lists every problem of the file (line, span index) or names the bad mapping entry."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    try:
        annotators = annotator_map(map_annotator or [], place="map_annotator entry")
    except FormatError as exc:
        raise HttpError(422, f"{exc} - nothing was imported") from None
    try:
        report = upload_annotations_import(
            upload=file, dataset_name=dataset.name, source=source.strip(), fmt=format, skip_bad_spans=skip_bad_spans,
            split=split.strip(), annotators=annotators,
        )
    except FormatError as exc:
        raise HttpError(413 if isinstance(exc, UploadTooLarge) else 422,
                        f"{named(exc, file.name or 'the upload')} - nothing was imported") from None
    return Status(201, AnnotationImportOut(
        dataset=report.dataset, source=report.source, tool=report.tool, annotations=report.annotations,
        spans=report.spans, normalized=report.normalized, no_error_outputs=report.no_error_outputs,
        skipped=report.skipped,
    ))
