"""Aspects, prompt templates, evaluators, evaluator runs and the audited, cached LLM calls."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from corpus.models import Dataset, ErrorSpan, Item, Source, SourceKind, TaskType
from evaluation.engine.confidence import SUPERVISOR_DECISIONS
from evaluation.engine.presets import small_models_in
from evaluation.runs.attempts import AttemptKind, read_number
from jobs.models import Job


class Aspect(models.Model):
    """A quality aspect of one task, with everything the prompts say about it (editable by admins)."""

    task = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="aspects")
    name = models.CharField(max_length=200, help_text="Lower-case; matches human-score keys of datasets.")
    definition = models.TextField()
    confused_with = models.JSONField(default=list, blank=True, help_text="Aspects not to confuse it with.")
    lowest = models.TextField(blank=True, default="", help_text="What the lowest score means.")
    highest = models.TextField(blank=True, default="", help_text="What the highest score means.")
    steps = models.JSONField(default=list, blank=True, help_text="Numbered evaluation steps.")
    output_only = models.BooleanField(default=False, help_text="Judged on the output alone (no inputs shown).")
    is_builtin = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task__slug", "name"]
        constraints = [models.UniqueConstraint(fields=["task", "name"], name="aspect_unique_per_task")]

    def __str__(self) -> str:
        return f"{self.task.slug}/{self.name}"


class LLMRole(models.TextChoices):
    """What an LLM does in a run: an annotator of the ensemble, its supervisor, or a distilled scorer. A prompt
    template is written for one role; each call of a run is made in one."""

    ANNOTATOR = "annotator", "Annotator"
    SUPERVISOR = "supervisor", "Supervisor"
    DISTILLED = "distilled", "Distilled model"


class PromptTemplate(models.Model):
    """A versioned prompt template; runs record the exact text they used."""

    kind = models.CharField(max_length=12, choices=LLMRole.choices)
    task = models.ForeignKey(
        TaskType, null=True, blank=True, on_delete=models.CASCADE, related_name="prompt_templates",
        help_text="Blank = used for every task without its own template.",
    )
    version = models.PositiveIntegerField(default=1)
    text = models.TextField()
    is_active = models.BooleanField(default=True)
    note = models.CharField(max_length=300, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "task__slug", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "task", "version"], name="template_unique_version"),
            models.UniqueConstraint(
                fields=["kind", "task"], condition=Q(is_active=True), name="template_one_active",
                nulls_distinct=False,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}/{self.task.slug if self.task else '*'} v{self.version}"


class Evaluator(models.Model):
    """A configured evaluator: an OpeNLGauge ensemble, a single LLM, the distilled model or a baseline."""

    class Kind(models.TextChoices):
        ENSEMBLE = "ensemble", "OpeNLGauge ensemble"
        SINGLE = "single", "Single LLM annotator"
        DISTILLED = "distilled", "Distilled model (0-100)"
        BASELINE = "baseline", "Baseline metric"

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.ENSEMBLE)
    config = models.JSONField(
        default=dict, blank=True,
        help_text='e.g. {"annotators": [...], "supervisor": "...", "options": {...}, "outlier_rule": "..."}',
    )
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class EvaluatorRun(Source, Job):
    """One evaluator over one dataset and aspect; its config and templates are frozen at creation.

    A run is the source of the annotations it writes (its `label` is their source name), so annotations
    point down to their source and the corpus never refers to evaluation."""

    # Not a module path: the name this kind's task had in an earlier layout, kept because messages already queued
    # and scripts send it by name. A new kind leaves task_name out and gets its own name (jobs.kinds.register).
    task_name = "tasks.preannotation.run_preannotation"
    cancelled_message = "Cancelled by an admin; completed calls and annotations are kept."
    kept_message = "Completed calls are kept; resume the run afterwards."

    source = models.OneToOneField(
        Source, on_delete=models.CASCADE, parent_link=True, primary_key=True, related_name="run"
    )
    evaluator = models.ForeignKey(Evaluator, on_delete=models.PROTECT, related_name="runs")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="runs")
    aspect = models.ForeignKey(Aspect, on_delete=models.PROTECT, related_name="runs")
    config = models.JSONField(default=dict, blank=True, help_text="Snapshot of the evaluator's config.")
    templates = models.JSONField(default=dict, blank=True, help_text="Exact template texts used, by kind.")
    ollama_url = models.CharField(
        max_length=2000, blank=True, default="", help_text="The servers as given, comma-separated (see `servers`)."
    )
    servers = models.JSONField(
        default=list, blank=True, help_text="LLM servers, in order: http://... (Ollama) or openai+http://..."
    )
    placement = models.JSONField(
        default=dict, blank=True, help_text="Which server runs which model, expected seconds, hand-overs."
    )
    parallel = models.PositiveSmallIntegerField(default=1)
    progress = models.JSONField(default=dict, blank=True, help_text="Per-model done/total counters.")
    failed_calls = models.PositiveIntegerField(default=0)
    cache_hits = models.PositiveIntegerField(default=0)
    simulated = models.BooleanField(
        default=False, help_text="Answered by the simulator (tests/ollama_sim), not a model: its figures are not real."
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(parallel__gte=1), name="run_parallel_positive"),
        ]
        indexes = [models.Index(fields=["dataset", "status"], name="run_dataset_status")]

    def __str__(self) -> str:
        return self.label

    def save(self, *args, **kwargs) -> None:
        self.kind = SourceKind.RUN
        super().save(*args, **kwargs)

    def tiny_models(self) -> list[str]:
        """This run's models that are the small real model (`run.sh --small-model`): its pages say so."""
        return small_models_in([*self.config.get("annotators", []), self.config.get("supervisor")])

    def cancel_message(self) -> str:
        if not self.done:
            return self.waiting_cancelled_message
        return f"Cancelled after {self.done} of {self.total} calls; their answers are kept (a new run reuses them)."


class LLMCall(models.Model):
    """One request to an LLM and its answer: the audit trail and the cache (keyed by model+digest+prompt+options)."""

    class Status(models.TextChoices):
        OK = "ok", "Answered"
        ERROR = "error", "Failed"

    cache_key = models.CharField(max_length=64, unique=True, help_text="sha256 of model, digest, prompt, options.")
    model = models.CharField(max_length=200)
    model_digest = models.CharField(max_length=128, blank=True, default="")
    prompt = models.TextField()
    options = models.JSONField(default=dict, blank=True)
    response = models.TextField(blank=True, default="")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OK)
    error = models.TextField(blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Prompt tokens the server took from its prompt cache, as it reported them (empty: not reported).",
    )
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    total_duration_ns = models.BigIntegerField(null=True, blank=True)
    load_duration_ns = models.BigIntegerField(null=True, blank=True)
    prompt_eval_duration_ns = models.BigIntegerField(null=True, blank=True)
    eval_duration_ns = models.BigIntegerField(null=True, blank=True)
    wall_seconds = models.FloatField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    done_reason = models.CharField(
        max_length=16, blank=True, default="",
        help_text="Why the answer ended, as the server said: stop, or length (cut at the answer budget).",
    )
    thinking = models.TextField(blank=True, default="", help_text="The model's reasoning trace, kept apart from "
                                "the answer (never parsed).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["model", "created_at"], name="llmcall_model_created")]

    def __str__(self) -> str:
        return f"{self.model} {self.cache_key[:10]} ({self.status})"


class RunCall(models.Model):
    """Which LLM call answered which step of a run (role, model, retry attempt) for which item."""

    run = models.ForeignKey(EvaluatorRun, on_delete=models.CASCADE, related_name="run_calls")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="run_calls")
    role = models.CharField(max_length=12, choices=LLMRole.choices)
    model = models.CharField(max_length=200)
    attempt = models.PositiveSmallIntegerField(
        default=0, help_text="0 first try, 1-9 warmer retry, 10+k try k with a longer budget, 100+n repair of call n."
    )
    call = models.ForeignKey(LLMCall, on_delete=models.PROTECT, related_name="run_calls")
    from_cache = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "item", "role", "model", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item", "role", "model", "attempt"], name="runcall_unique_step"),
        ]

    @property
    def attempt_kind(self) -> AttemptKind:
        return read_number(self.attempt).kind


class SpanConfidence(models.Model):
    """What the run's ensemble said about one of its machine spans (evaluation.engine.confidence): `k` of `n`
    annotator models flagged an overlapping stretch, the supervisor's decision, severity and category agreement.

    Derived from the run's stored per-model answers, once (evaluation.services.confidence)."""

    span = models.OneToOneField(ErrorSpan, on_delete=models.CASCADE, primary_key=True, related_name="confidence")
    run = models.ForeignKey(EvaluatorRun, on_delete=models.CASCADE, related_name="span_confidences")
    k = models.PositiveSmallIntegerField(help_text="Annotator models that flagged an overlapping stretch.")
    n = models.PositiveSmallIntegerField(help_text="Annotator models with a usable answer on the item.")
    flagged_by = models.JSONField(default=list, blank=True, help_text="The models that flagged it, by name.")
    supervisor = models.CharField(max_length=10, choices=SUPERVISOR_DECISIONS)
    severity_agreement = models.FloatField(
        null=True, blank=True, help_text="Share of the flagging models that gave the span's severity.")
    category_agreement = models.FloatField(
        null=True, blank=True, help_text="Share of the flagging models that gave the span's category.")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(k__lte=F("n")), name="confidence_k_at_most_n"),
            models.CheckConstraint(
                condition=(Q(severity_agreement__isnull=True) | Q(severity_agreement__gte=0, severity_agreement__lte=1))
                & (Q(category_agreement__isnull=True) | Q(category_agreement__gte=0, category_agreement__lte=1)),
                name="confidence_agreements_are_shares"),
        ]
        indexes = [models.Index(fields=["run", "k"], name="confidence_run_k")]

    def __str__(self) -> str:
        return f"span {self.span_id}: {self.k} of {self.n}"
