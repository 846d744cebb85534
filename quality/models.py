"""A campaign's quality checks: decoys and copied spans, planted outputs, and qualification results."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotator.models import Campaign, CampaignRun, ExplanationVerdict, SpanVerdict
from corpus.models import ErrorSpan, Item, Source, SourceKind
from evaluation.models import LLMCall
from jobs.models import Job


class CheckSource(Source):
    """The hidden spans of one campaign's checks (decoys, machine spans copied onto planted outputs): a source
    of its own kind, so Table 4, agreement, consensus and exports never read them as any evaluator's."""

    source = models.OneToOneField(
        Source, on_delete=models.CASCADE, parent_link=True, primary_key=True, related_name="checks_of"
    )
    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="check_source")

    def save(self, *args, **kwargs) -> None:
        self.kind = SourceKind.CHECK
        super().save(*args, **kwargs)

    class Meta:
        db_table = "annotator_checksource"


class CheckSpan(models.Model):
    """A span the annotators judge that is not an evaluator's: a decoy (a known non-error shown under an
    evaluator's label), or a machine span copied onto a planted output (where its offsets shift)."""

    class Role(models.TextChoices):
        DECOY = "decoy", "Decoy"
        COPY = "copy", "Machine span on a planted output"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="check_spans")
    span = models.OneToOneField(ErrorSpan, on_delete=models.CASCADE, related_name="check_span")
    campaign_run = models.ForeignKey(CampaignRun, on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=8, choices=Role.choices)
    original = models.ForeignKey(ErrorSpan, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    donor = models.ForeignKey(
        ErrorSpan, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="A decoy's donor: the real machine span it copies (label, severity, the voice of its explanation).",
    )
    key_span_verdict = models.CharField(max_length=16, choices=SpanVerdict.choices, blank=True, default="")
    key_explanation_verdict = models.CharField(max_length=20, choices=ExplanationVerdict.choices, blank=True,
                                               default="")

    class Meta:
        db_table = "annotator_checkspan"
        ordering = ["campaign_id", "span_id"]


class PlantedOutput(models.Model):
    """An output shown to one annotator with one known error planted: its own hidden item (derived from the
    real one), never mixed into the real output's judgments. [start, end) is the planted stretch. A link's
    copies are made with the campaign and handed to participants as they join."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="planted_outputs")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+",
        help_text="Who it is shown to; empty: a copy of a link's pool, waiting for a participant.")
    original = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="planted")
    kind = models.CharField(max_length=16)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    before = models.TextField()
    after = models.TextField()

    class Meta:
        db_table = "annotator_plantedoutput"
        ordering = ["campaign_id", "annotator_id", "pk"]
        constraints = [models.CheckConstraint(condition=Q(start__lt=F("end")), name="planted_start_before_end")]


class Qualification(models.Model):
    """One annotator's result on a campaign's training items: the share of span verdicts equal to the key."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="qualifications")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True, help_text="None until every training item is finished.")
    attempts = models.PositiveSmallIntegerField(default=1)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotator_qualification"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="qualification_one_per_annotator"),
        ]


class DecoyExplanationJob(Job):
    """Asks the model behind each decoy's evaluator run to explain the decoy's stretch as an error, in the run's
    answer format; a parsed answer replaces the decoy's explanation (quality.decoy_explaining). The campaign stays a
    draft while it runs. Progress counts decoys."""

    cancelled_message = "Cancelled; the explanations written so far are kept, the other decoys keep theirs."
    kept_message = "The explanations written so far are kept; resume the job once the server answers."

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="decoy_jobs")
    automatic = models.BooleanField(default=False, help_text="Started by the campaign's creation, not by a person.")
    simulated = models.BooleanField(
        default=False, help_text="Answered by the simulator (tests/ollama_sim), not a model: its explanations are not "
                                 "a model's.")

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "decoy explanation job"

    def __str__(self) -> str:
        return f"decoy explanations {self.pk} of campaign {self.campaign_id}"

    def cancel_message(self) -> str:
        if not self.done:
            return self.waiting_cancelled_message
        return f"Cancelled after {self.done} of {self.total} decoys; their explanations are kept."


class DecoyExplanation(models.Model):
    """What one job did with one decoy: rewrote its explanation (the answer's call), or kept it and why."""

    class Outcome(models.TextChoices):
        REWRITTEN = "rewritten", "Rewritten by the evaluator's model"
        UNUSABLE = "unusable", "Kept: the answer gave no error at the stretch"
        KEPT = "kept", "Kept as written: no model at hand, or edited meanwhile"

    job = models.ForeignKey(DecoyExplanationJob, on_delete=models.CASCADE, related_name="rows")
    decoy = models.ForeignKey(CheckSpan, on_delete=models.CASCADE, related_name="+")
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    model = models.CharField(max_length=200, blank=True, default="")
    call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    before = models.TextField(blank=True, default="", help_text="The explanation the decoy had when it was asked.")
    note = models.TextField(blank=True, default="", help_text="Why the explanation was kept.")

    class Meta:
        ordering = ["job_id", "pk"]
        constraints = [models.UniqueConstraint(fields=["job", "decoy"], name="decoy_explanation_once_per_job")]


class PlantedWritingJob(Job):
    """Asks a model to write the planted error of each planted output of a draft into its original output (given
    its inputs); a usable answer replaces the copy's rule-made error (quality.planted_writing). The campaign stays a
    draft while it runs. Progress counts planted outputs."""

    cancelled_message = ("Cancelled; the planted errors written so far are kept, the other outputs keep their "
                         "rule-made ones.")
    kept_message = "The planted errors written so far are kept; resume the job once the server answers."

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="planted_jobs")
    server = models.CharField(max_length=300, help_text="The LLM server asked (its address as a job lists it).")
    model = models.CharField(max_length=200, help_text="The model that writes the planted errors.")
    automatic = models.BooleanField(default=False, help_text="Started by the campaign's creation, not by a person.")
    simulated = models.BooleanField(
        default=False, help_text="Answered by the simulator (tests/ollama_sim), not a model: its planted errors are "
                                 "not a model's.")

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "planted error writing job"

    def __str__(self) -> str:
        return f"planted errors {self.pk} of campaign {self.campaign_id}"

    def cancel_message(self) -> str:
        if not self.done:
            return self.waiting_cancelled_message
        return f"Cancelled after {self.done} of {self.total} planted outputs; their planted errors are kept."


class PlantedWriting(models.Model):
    """What one job did with one planted output: a model's planted error replaced the rule-made one (the answer's
    call), or the rule-made one was kept and why."""

    class Outcome(models.TextChoices):
        REWRITTEN = "rewritten", "Rewritten by the model"
        UNUSABLE = "unusable", "Kept: the answer gave no single usable change"
        KEPT = "kept", "Kept as made: no model at hand, or changed meanwhile"

    job = models.ForeignKey(PlantedWritingJob, on_delete=models.CASCADE, related_name="rows")
    planted = models.ForeignKey(PlantedOutput, on_delete=models.CASCADE, related_name="+")
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    model = models.CharField(max_length=200, blank=True, default="")
    call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    before = models.TextField(blank=True, default="", help_text="The planted output's text when it was asked.")
    note = models.TextField(blank=True, default="", help_text="Why the rule-made planted error was kept.")

    class Meta:
        ordering = ["job_id", "pk"]
        constraints = [models.UniqueConstraint(fields=["job", "planted"], name="planted_writing_once_per_job")]
