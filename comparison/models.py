"""Metric comparison jobs and the per-item metric scores they compute (shared by every job on a dataset)."""

from __future__ import annotations

from django.db import models

from corpus.models import Dataset, Item
from evaluation.engine.presets import small_models_in
from jobs.models import Job


class ComparisonJob(Job):
    """Metrics against a dataset's human scores on some aspects; its results are computed when it ends."""

    # Not a module path: the name this kind's task had in an earlier layout, kept because messages already queued
    # and scripts send it by name. A new kind leaves task_name out and gets its own name (jobs.kinds.register).
    task_name = "tasks.comparison.run_comparison"
    cancelled_message = "Cancelled by an admin; the scores computed so far are kept."
    waiting_cancelled_message = "Cancelled."
    kept_message = "Scores already computed are kept; resume the job."

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="comparison_jobs")
    metrics = models.JSONField(default=list, help_text="Metric names as given, e.g. ['length', 'gptscore:opt'].")
    aspects = models.JSONField(default=list, help_text="Human-score keys of the dataset, in the dataset's order.")
    options = models.JSONField(default=dict, blank=True, help_text="ollama_url, gptscore_url, bootstrap, seed.")
    progress = models.JSONField(
        default=dict, blank=True, help_text="metric -> {done, total}; `done` and `total` are their sums."
    )
    runs = models.JSONField(default=dict, blank=True, help_text="metric -> {aspect: evaluator run id}.")
    results = models.JSONField(default=dict, blank=True, help_text="Correlations and checklist, computed at the end.")
    llm_calls = models.PositiveIntegerField(default=0, help_text="LLM requests this job sent (cache hits excluded).")
    simulated = models.BooleanField(
        default=False, help_text="Answered by the simulator (tests/ollama_sim), not a model: its figures are not real."
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"comparison {self.pk} on {self.dataset_id}"

    def tiny_models(self) -> list[str]:
        """The small real model (`run.sh --small-model`) among the models this job's metrics name (`gptscore:M`)."""
        return small_models_in([part for metric in self.metrics for part in str(metric).split(":")[1:]])


class MetricScore(models.Model):
    """One metric's score of one item for one aspect ('' = the metric ignores the aspect, as baselines do).

    Scores belong to the item, not to a job: a second job (or the same one resumed) on the dataset asks
    only for the (metric, aspect) pairs that are missing."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="metric_scores")
    metric = models.CharField(max_length=300)
    aspect = models.CharField(max_length=200, blank=True, default="")
    value = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "metric", "aspect"], name="metricscore_unique"),
        ]
        indexes = [models.Index(fields=["metric", "aspect"], name="metricscore_metric_aspect")]
