"""Task types, datasets, items, annotation sources, annotations and their error spans."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from corpus.protocols.opennlgauge import ANNOTATION_KINDS, MATCH_KINDS, SEVERITIES


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


class SourceKind(models.TextChoices):
    RUN = "run", "Evaluator run"
    IMPORT = "import", "Imported file"
    CAMPAIGN = "campaign", "Added by an expert in a campaign"
    EXTERNAL = "external", "Imported from another tool"
    CHECK = "check", "A campaign's hidden quality checks (never exported)"


class Source(models.Model):
    """Who produced a set of annotations: an evaluator run, an imported file's source, or an expert in a campaign.

    The layers above extend it (an evaluator run and an expert's additions in a campaign are sources), so that
    annotations point down to it and never up to a run or a campaign. Labels of runs and imports are unique
    per kind; experts' additions are labelled with the username, once per campaign.
    """

    label = models.CharField(max_length=200, help_text="The name written in exports: a run label, 'gold', a person.")
    kind = models.CharField(max_length=12, choices=SourceKind.choices, default=SourceKind.IMPORT)
    # Provenance of an external source (another tool's annotations): which tool, whose, from which file.
    tool = models.CharField(max_length=32, blank=True, default="", help_text="jsonl, factgenie or labelstudio.")
    producer = models.CharField(max_length=200, blank=True, default="", help_text="The annotator or model named.")
    file_name = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["label"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "label"], condition=~Q(kind="campaign"), name="source_unique_label_per_kind"
            ),
        ]

    def __str__(self) -> str:
        return self.label


# Members named after their values (AnnotationKind.GOLD == "gold"); the values live in corpus.protocols.opennlgauge.
AnnotationKind = models.TextChoices(
    "AnnotationKind", [(value.upper(), (value, label)) for value, label in ANNOTATION_KINDS]
)


class ParseStatus(models.TextChoices):
    OK = "ok", "Parsed"
    PARTIAL = "partial", "Parsed with problems"
    FAILED = "failed", "Unparseable"
    NOT_APPLICABLE = "n/a", "Not an LLM answer"


class Unit(models.Model):
    """Outputs of one input that one rater judged together, on one screen (side-by-side MQM): the unit a pairwise
    comparison is made on. The ratings point to it (Annotation.unit) with their place on the screen."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="units")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="units", help_text="The rater.")
    segment = models.CharField(max_length=200, help_text="The input's id: its items' external_id.")
    number = models.PositiveSmallIntegerField(help_text="1-based: the rater's screens on this input in time order.")

    class Meta:
        ordering = ["dataset", "source", "segment", "number"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "source", "segment", "number"], name="unit_unique_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="unit_number_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} on {self.segment} #{self.number}"


class Annotation(models.Model):
    """A set of error spans (and maybe a score) for one item and aspect, by one source."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    aspect = models.CharField(max_length=200, blank=True, default="", help_text="Aspect name; blank = any.")
    source = models.ForeignKey("Source", on_delete=models.CASCADE, related_name="annotations")
    kind = models.CharField(max_length=16, choices=AnnotationKind.choices)
    model = models.CharField(max_length=200, blank=True, default="")
    score = models.FloatField(null=True, blank=True)
    score_label = models.CharField(max_length=32, blank=True, default="")
    score_explanation = models.TextField(blank=True, default="")
    raw_answer = models.TextField(blank=True, default="")
    parse_status = models.CharField(max_length=8, choices=ParseStatus.choices, default=ParseStatus.NOT_APPLICABLE)
    parse_problems = models.JSONField(default=list, blank=True)
    is_outlier = models.BooleanField(default=False, help_text="Left out of the supervisor's input.")
    is_sample = models.BooleanField(default=False, help_text="Demo sample written by the team, not a model.")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="annotations"
    )
    # Side by side: the screen the output was judged on, and its column there (1 the first; None when unknown).
    unit = models.ForeignKey(Unit, null=True, blank=True, on_delete=models.CASCADE, related_name="annotations")
    unit_position = models.PositiveSmallIntegerField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True, help_text="What the imported file had beyond the columns "
                             "here (the side-by-side TSV's rows, as written).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "aspect", "kind", "source_id", "model"]
        constraints = [
            models.CheckConstraint(
                condition=Q(unit_position__isnull=True) | Q(unit__isnull=False, unit_position__gte=1),
                name="annotation_position_on_a_unit",
            ),
            models.UniqueConstraint(fields=["unit", "unit_position"], condition=Q(unit_position__isnull=False),
                                    name="annotation_unique_unit_position"),
            models.UniqueConstraint(
                fields=["item", "aspect", "source", "kind", "model"], name="annotation_unique_per_source"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0), name="annotation_score_nonnegative"
            ),
        ]
        indexes = [
            models.Index(fields=["source", "kind"], name="annotation_source_kind"),
            models.Index(fields=["item", "aspect"], name="annotation_item_aspect"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.source_id} on {self.item_id} ({self.aspect or '-'})"


MatchKind = models.TextChoices("MatchKind", [(value.upper(), (value, label)) for value, label in MATCH_KINDS])


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
    source_start = models.PositiveIntegerField(
        null=True, blank=True, help_text="Offsets into the item's source, for an error marked there (an MQM "
                                         "omission); such a span has no offsets in the output.")
    source_end = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["annotation_id", "position"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(source_start__isnull=True) & Q(source_end__isnull=True))
                | (Q(source_start__isnull=False) & Q(source_end__isnull=False) & Q(source_start__lt=F("source_end"))
                   & Q(start__isnull=True)),
                name="span_source_offsets_both_or_none_ordered_not_in_output",
            ),
            models.CheckConstraint(
                condition=(Q(start__isnull=True) & Q(end__isnull=True))
                | (Q(start__isnull=False) & Q(end__isnull=False) & Q(start__lt=F("end"))),
                name="span_offsets_both_or_none_ordered",
            ),
            models.CheckConstraint(
                condition=Q(severity__isnull=True) | Q(severity__gte=min(SEVERITIES), severity__lte=max(SEVERITIES)),
                name="span_severity_1_to_5",
            ),
            models.CheckConstraint(
                condition=Q(start__isnull=True) | ~Q(match="none"), name="span_none_match_has_no_offsets"
            ),
        ]
        indexes = [models.Index(fields=["annotation", "position"], name="span_annotation_position")]

    def __str__(self) -> str:
        where = (f"{self.start}-{self.end}" if self.start is not None
                 else f"source {self.source_start}-{self.source_end}" if self.in_source else "no offsets")
        return f"{self.text[:40]!r} ({where})"

    @property
    def in_source(self) -> bool:
        """Whether the error was marked in the item's source rather than in its output."""
        return self.source_start is not None
