"""Datasets, items, annotations with error spans, campaigns, assignments and human judgments."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import F, Q


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    RESEARCHER = "researcher", "Researcher"
    ANNOTATOR = "annotator", "Annotator"


class User(AbstractUser):
    """A person with one role; admins and researchers see everything, annotators only their work."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)

    @property
    def is_admin_role(self) -> bool:
        return self.role == Role.ADMIN or self.is_superuser

    @property
    def sees_everything(self) -> bool:
        return self.is_admin_role or self.role == Role.RESEARCHER


class TaskType(models.Model):
    """An NLG task (data-to-text, summarization, ...); built-ins come from the engine, admins may add."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=128)
    description = models.TextField(help_text="How the task is described to the LLM evaluators.")
    output_noun = models.CharField(max_length=64, default="output", help_text="e.g. 'summary'.")
    is_builtin = models.BooleanField(default=False)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Dataset(models.Model):
    name = models.CharField(max_length=200, unique=True)
    task = models.ForeignKey(TaskType, on_delete=models.PROTECT, related_name="datasets")
    input_headers = models.JSONField(default=list, blank=True, help_text="Input headers in file order.")
    output_header = models.CharField(max_length=200, default="Output")
    score_aspects = models.JSONField(default=list, blank=True, help_text="Human-score aspects in file order.")
    description = models.TextField(blank=True)
    source_file = models.CharField(max_length=500, blank=True)
    is_demo = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Item(models.Model):
    """One output to evaluate, with its inputs; (external_id, system) is unique within a dataset."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField(help_text="Order of the item in the imported file.")
    external_id = models.CharField(max_length=200)
    system = models.CharField(max_length=200, blank=True, default="")
    inputs = models.JSONField(default=dict, blank=True, help_text="Header -> text, in file order.")
    output = models.TextField()
    reference = models.TextField(blank=True, default="")
    human_scores = models.JSONField(default=dict, blank=True, help_text="Aspect -> human score.")
    extra = models.JSONField(default=dict, blank=True, help_text="Unknown fields kept from the file.")
    # DHP perturbations point back to the original they were made from.
    derived_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="derivatives"
    )
    perturbation = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id", "system"], name="item_unique_id_system"),
            models.UniqueConstraint(fields=["dataset", "position"], name="item_unique_position"),
        ]
        indexes = [models.Index(fields=["dataset", "system"], name="item_dataset_system")]

    def __str__(self) -> str:
        suffix = f" [{self.system}]" if self.system else ""
        return f"{self.dataset.name}:{self.external_id}{suffix}"


class AnnotationKind(models.TextChoices):
    ENSEMBLE = "ensemble", "Ensemble (merged)"
    ANNOTATOR = "annotator", "Annotator LLM"
    SUPERVISOR = "supervisor", "Supervisor LLM"
    HUMAN = "human", "Human"
    GOLD = "gold", "Gold reference"


class ParseStatus(models.TextChoices):
    OK = "ok", "Parsed"
    PARTIAL = "partial", "Parsed with problems"
    FAILED = "failed", "Unparseable"
    NOT_APPLICABLE = "n/a", "Not an LLM answer"


class Annotation(models.Model):
    """A set of error spans (and maybe a score) for one item and aspect, by one source."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    aspect = models.CharField(max_length=200, blank=True, default="", help_text="Aspect name; blank = any.")
    source = models.CharField(max_length=200, help_text="Who produced it: a run label, 'gold', a person.")
    kind = models.CharField(max_length=16, choices=AnnotationKind.choices)
    model = models.CharField(max_length=200, blank=True, default="")
    run = models.ForeignKey(
        "evaluation.EvaluatorRun", null=True, blank=True, on_delete=models.CASCADE, related_name="annotations"
    )
    score = models.FloatField(null=True, blank=True)
    score_label = models.CharField(max_length=32, blank=True, default="")
    score_explanation = models.TextField(blank=True, default="")
    raw_answer = models.TextField(blank=True, default="")
    parse_status = models.CharField(max_length=8, choices=ParseStatus.choices, default=ParseStatus.NOT_APPLICABLE)
    parse_problems = models.JSONField(default=list, blank=True)
    is_outlier = models.BooleanField(default=False, help_text="Left out of the supervisor's input.")
    is_sample = models.BooleanField(default=False, help_text="Demo sample written by the team, not a model.")
    llm_call = models.ForeignKey(
        "evaluation.LLMCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="annotations"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="annotations"
    )
    campaign = models.ForeignKey(
        "Campaign", null=True, blank=True, on_delete=models.CASCADE, related_name="added_annotations"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "aspect", "kind", "source", "model"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "aspect", "source", "kind", "model"], name="annotation_unique_per_source"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0), name="annotation_score_nonnegative"
            ),
        ]
        indexes = [
            models.Index(fields=["run", "kind"], name="annotation_run_kind"),
            models.Index(fields=["item", "aspect"], name="annotation_item_aspect"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.source} on {self.item_id} ({self.aspect or '-'})"


class MatchKind(models.TextChoices):
    EXACT = "exact", "Exact"
    NORMALIZED = "normalized", "Normalized"
    FUZZY = "fuzzy", "Fuzzy"
    NONE = "none", "Not in the text"


class MultiPart(models.TextChoices):
    SINGLE = "", "Single location"
    SPLIT = "split", "One part of a '...'-joined location"
    COVER = "cover", "Covers a '...'-joined location"


class ErrorSpan(models.Model):
    """One error: the location as written, its offsets in the output (if found) and its explanation."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="spans")
    position = models.PositiveIntegerField(default=0)
    text = models.TextField(blank=True, default="", help_text="The location as written by its author.")
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    match = models.CharField(max_length=12, choices=MatchKind.choices, default=MatchKind.EXACT)
    multi_part = models.CharField(max_length=8, choices=MultiPart.choices, blank=True, default="")
    ambiguous = models.BooleanField(default=False, help_text="The location occurs more than once.")
    explanation = models.TextField(blank=True, default="")
    severity = models.PositiveSmallIntegerField(null=True, blank=True)
    category = models.CharField(max_length=100, blank=True, default="")
    note = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["annotation_id", "position"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(start__isnull=True) & Q(end__isnull=True))
                | (Q(start__isnull=False) & Q(end__isnull=False) & Q(start__lt=F("end"))),
                name="span_offsets_both_or_none_ordered",
            ),
            models.CheckConstraint(
                condition=Q(severity__isnull=True) | Q(severity__gte=1, severity__lte=5),
                name="span_severity_1_to_5",
            ),
            models.CheckConstraint(
                condition=Q(start__isnull=True) | ~Q(match="none"), name="span_none_match_has_no_offsets"
            ),
        ]
        indexes = [models.Index(fields=["annotation", "position"], name="span_annotation_position")]

    def __str__(self) -> str:
        where = f"{self.start}-{self.end}" if self.start is not None else "no offsets"
        return f"{self.text[:40]!r} ({where})"


class Campaign(models.Model):
    """A blind study: experts judge the spans of chosen evaluator runs on a dataset."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=200, unique=True)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="campaigns")
    aspects = models.JSONField(default=list, blank=True, help_text="Aspect names judged in this campaign.")
    runs = models.ManyToManyField("evaluation.EvaluatorRun", through="CampaignRun", related_name="campaigns")
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="campaigns")
    annotators_per_item = models.PositiveSmallIntegerField(default=1)
    guidelines = models.TextField(blank=True, default="", help_text="Markdown shown to the annotators.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.DRAFT)
    seed = models.IntegerField(default=0, help_text="Seeds the per-annotator item order.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(annotators_per_item__gte=1), name="campaign_overlap_positive"),
        ]

    def __str__(self) -> str:
        return self.name


class CampaignRun(models.Model):
    """An evaluator run judged in a campaign, under a neutral label the annotators see."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="campaign_runs")
    run = models.ForeignKey("evaluation.EvaluatorRun", on_delete=models.PROTECT, related_name="campaign_runs")
    label = models.CharField(max_length=32, help_text="Neutral name shown to annotators, e.g. 'Evaluator A'.")

    class Meta:
        ordering = ["campaign", "label"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "run"], name="campaignrun_unique_run"),
            models.UniqueConstraint(fields=["campaign", "label"], name="campaignrun_unique_label"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.name}: {self.label}"


class Assignment(models.Model):
    """One item for one annotator in one campaign; `order` is that annotator's shuffled position."""

    class Status(models.TextChoices):
        TODO = "todo", "To do"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    order = models.PositiveIntegerField()
    is_control = models.BooleanField(default=False)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.TODO)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["campaign", "annotator", "order"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "item", "annotator"], name="assignment_unique"),
            models.UniqueConstraint(fields=["campaign", "annotator", "order"], name="assignment_unique_order"),
        ]
        indexes = [models.Index(fields=["annotator", "status"], name="assignment_annotator_status")]

    def __str__(self) -> str:
        return f"{self.campaign.name} #{self.order} for {self.annotator}"

    def is_done(self) -> bool:
        return self.status == self.Status.DONE


class SpanVerdict(models.TextChoices):
    ERROR = "error", "Error"
    NOT_ERROR = "not_error", "Not an error"
    NO_SPAN = "no_span", "No span given"
    HALLUCINATION = "hallucination", "Hallucination"


class ExplanationVerdict(models.TextChoices):
    CORRECT = "correct", "Correct"
    PARTIALLY_CORRECT = "partially_correct", "Partially correct"
    INCOMPLETE = "incomplete", "Incomplete"
    VAGUE = "vague", "Vague"
    INCORRECT = "incorrect", "Incorrect"
    NOT_ERROR = "not_error", "Not an error"


FLAG_FIELDS: dict[str, str] = {
    "too_strict": "Too strict",
    "not_aspect_related": "Not aspect related",
    "repeated": "Repeated",
    "hard_to_parse": "Hard to parse",
    "implicit_span": "Implicit span",
}


class SpanJudgment(models.Model):
    """One annotator's verdicts on one machine span (the study protocol of DESIGN.md)."""

    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judgments")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    span_verdict = models.CharField(max_length=16, choices=SpanVerdict.choices, blank=True, default="")
    explanation_verdict = models.CharField(
        max_length=20, choices=ExplanationVerdict.choices, blank=True, default=""
    )
    # Flags are columns, not a list, so that their rates aggregate in the database.
    too_strict = models.BooleanField(default=False)
    not_aspect_related = models.BooleanField(default=False)
    repeated = models.BooleanField(default=False)
    hard_to_parse = models.BooleanField(default=False)
    implicit_span = models.BooleanField(default=False)
    comment = models.TextField(blank=True, default="")
    corrected_severity = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["span_id", "annotator_id"]
        constraints = [
            models.UniqueConstraint(fields=["span", "annotator"], name="judgment_one_per_annotator_span"),
            models.CheckConstraint(
                condition=Q(corrected_severity__isnull=True) | Q(corrected_severity__gte=1, corrected_severity__lte=5),
                name="judgment_severity_1_to_5",
            ),
        ]
        indexes = [models.Index(fields=["assignment"], name="judgment_assignment")]

    def __str__(self) -> str:
        return f"{self.annotator} on span {self.span_id}: {self.span_verdict}/{self.explanation_verdict}"

    def flags(self) -> list[str]:
        return [name for name in FLAG_FIELDS if getattr(self, name)]

    def is_complete(self) -> bool:
        return bool(self.span_verdict and self.explanation_verdict)


class JudgmentEvent(models.Model):
    """Audit trail (and undo stack): who changed which field of a judgment, from what to what, when."""

    judgment = models.ForeignKey(SpanJudgment, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    field = models.CharField(max_length=32)
    old_value = models.TextField(blank=True, default="")
    new_value = models.TextField(blank=True, default="")
    undone = models.BooleanField(default=False)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judgment_id", "at", "id"]
        indexes = [models.Index(fields=["user", "at"], name="judgmentevent_user_at")]


class ControlVerdict(models.Model):
    """The known correct verdicts of a span on a control item of a campaign."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="control_verdicts")
    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="control_verdicts")
    span_verdict = models.CharField(max_length=16, choices=SpanVerdict.choices)
    explanation_verdict = models.CharField(max_length=20, choices=ExplanationVerdict.choices, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "span"], name="control_unique_span")]


class ApiToken(models.Model):
    """A bearer token for scripts; only its sha256 is stored."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, default="script")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.user} / {self.name}"
