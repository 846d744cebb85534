"""Expert-weight surveys (invitations, votes, versioned weights), per-task perturbation sizes, DHP runs and
their scores. Perturbed texts themselves are corpus items (`Item.derived_from`, `Item.perturbation`)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from corpus.models import Dataset, Item, TaskType
from dhp.engine.kinds import BASE_KINDS, default_k_table
from evaluation.engine.presets import small_models_in
from evaluation.models import EvaluatorRun, LLMCall
from jobs.models import Job

ISSUE_CHOICES = [(name, kind.title) for name, kind in BASE_KINDS.items()]


class PerturbationSizes(models.Model):
    """An admin's override of the paper's default k per kind for one task (`{"typo:minor": 10, ...}`)."""

    task = models.OneToOneField(TaskType, on_delete=models.CASCADE, related_name="dhp_sizes")
    sizes = models.JSONField(default=dict, blank=True, help_text='Kind -> k, e.g. {"typo:major": 40}.')
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "perturbation sizes"

    def __str__(self) -> str:
        return f"k for {self.task.slug}"

    def clean(self) -> None:
        """Only sized kinds, with whole k >= 1; sentence reordering takes 2 (swap two) or 0 (shuffle all)."""
        if not isinstance(self.sizes, dict):
            raise ValidationError({"sizes": 'Give an object such as {"typo:major": 40}.'})
        sized = default_k_table(self.task.slug if self.task_id else "")
        for kind, k in self.sizes.items():
            if kind not in sized:
                raise ValidationError({"sizes": f"{kind!r} is not a kind with a size; sized kinds: {', '.join(sized)}"})
            if kind.startswith("sentence-reorder"):
                if k not in (0, 2) or isinstance(k, bool):
                    raise ValidationError({"sizes": f"k of {kind} must be 2 (swap two) or 0 (shuffle all), not {k!r}"})
            elif not isinstance(k, int) or isinstance(k, bool) or k < 1:
                raise ValidationError({"sizes": f"k of {kind} must be a whole number >= 1, not {k!r}"})


class PerturbationSkip(models.Model):
    """A (original, kind, seed, k) that did not fit, and why; kept so a repeated `perturb` reports it again."""

    original = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="dhp_skips")
    kind = models.CharField(max_length=40)
    seed = models.IntegerField()
    k = models.IntegerField(null=True, blank=True)
    reason = models.TextField()
    raw_answer = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["original", "kind", "seed", "k"], name="dhp_skip_unique",
                                    nulls_distinct=False),
        ]


class Survey(models.Model):
    """Which metric does each quality issue hurt most? Asked of invited experts for one task."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    task = models.ForeignKey(TaskType, on_delete=models.PROTECT, related_name="dhp_surveys")
    title = models.CharField(max_length=200)
    metrics = models.JSONField(help_text='[{"name", "definition"}] as shown to the experts.')
    issues = models.JSONField(help_text="Perturbation base kinds asked about, in order.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title

    def metric_names(self) -> list[str]:
        return [m["name"] for m in self.metrics]


class SurveyInvitation(models.Model):
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="invitations")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dhp_invitations")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["survey", "expert"], name="dhp_invitation_unique")]


class SurveyVote(models.Model):
    """One expert's choice: the metric a quality issue impacts most."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="votes")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dhp_votes")
    issue = models.CharField(max_length=40, choices=ISSUE_CHOICES)
    metric = models.CharField(max_length=200)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["survey", "expert", "issue"]
        constraints = [models.UniqueConstraint(fields=["survey", "expert", "issue"], name="dhp_vote_unique")]


class SurveyWeights(models.Model):
    """A frozen version of a survey's weights ({issue: {metric: share}}); DHP runs point to the one they used."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="weight_versions")
    version = models.PositiveIntegerField()
    weights = models.JSONField()
    n_experts = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "-version"]
        verbose_name = verbose_name_plural = "survey weights"
        constraints = [models.UniqueConstraint(fields=["survey", "version"], name="dhp_weights_unique_version")]

    def __str__(self) -> str:
        return f"{self.survey} v{self.version}"


class DhpRun(Job):
    """One DHP benchmark job: perturb (if needed), score originals and perturbed texts, test, combine."""

    # Not a module path: the name this kind's task had in an earlier layout, kept because messages already queued
    # and scripts send it by name. A new kind leaves task_name out and gets its own name (jobs.kinds.register).
    task_name = "tasks.dhp.run_dhp"
    cancelled_message = "Cancelled by an admin; stored scores and calls are kept."
    kept_message = "Stored calls are kept; resume the run once the server can answer."

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="dhp_runs")
    evaluator = models.CharField(max_length=200, help_text="An Ollama model, 'ensemble' or 'distilled:MODEL'.")
    metrics = models.JSONField()
    kinds = models.JSONField()
    sizes = models.JSONField(default=dict, blank=True, help_text="k per kind used.")
    samples = models.PositiveSmallIntegerField(default=5)
    seed = models.IntegerField(default=0)
    ollama_url = models.CharField(max_length=300, blank=True, default="")
    parallel = models.PositiveSmallIntegerField(default=1)
    config = models.JSONField(default=dict, blank=True, help_text="Options, digests, models.")
    survey = models.ForeignKey(Survey, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    weights = models.ForeignKey(SurveyWeights, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    stage = models.CharField(max_length=40, blank=True, default="",
                             help_text="Where the run's work is: perturbing, scoring or statistics.")
    notes = models.JSONField(default=list, blank=True, help_text="Skipped kinds and other remarks.")
    llm_calls = models.PositiveIntegerField(default=0, help_text="Calls actually sent (not from the cache).")
    cache_hits = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True)
    evaluator_runs = models.ManyToManyField(EvaluatorRun, blank=True, related_name="dhp_runs")
    simulated = models.BooleanField(
        default=False, help_text="Answered by the simulator (tests/ollama_sim), not a model: its figures are not real."
    )

    class Meta:
        verbose_name = "DHP run"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(samples__gte=1), name="dhp_run_samples_positive"),
            models.CheckConstraint(condition=Q(parallel__gte=1), name="dhp_run_parallel_positive"),
        ]

    def __str__(self) -> str:
        return f"DHP {self.pk}: {self.evaluator} on {self.dataset}"

    def tiny_models(self) -> list[str]:
        """This run's scoring or perturbing models that are the small real model (`run.sh --small-model`)."""
        return small_models_in([self.config.get("model"), self.config.get("perturb_model")])


class DhpScore(models.Model):
    """One score of one text (original or perturbed) on one metric, sample `sample` of the run's n."""

    run = models.ForeignKey(DhpRun, on_delete=models.CASCADE, related_name="scores")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="dhp_scores")
    metric = models.CharField(max_length=200)
    sample = models.PositiveSmallIntegerField(default=0)
    score = models.FloatField(null=True, blank=True, help_text="Null when every attempt was unparseable.")
    call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.PROTECT, related_name="dhp_scores")
    from_cache = models.BooleanField(default=False)

    class Meta:
        ordering = ["run", "item", "metric", "sample"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item", "metric", "sample"], name="dhp_score_unique"),
        ]
