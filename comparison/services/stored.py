"""What every metric family of a comparison job shares: the dataset's items as plain rows, and the stored
scores (per item, metric and aspect) that a later or resumed job reads instead of computing again."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from comparison.engine.metrics import LOCAL_GPTSCORE
from comparison.models import ComparisonJob, MetricScore
from corpus.models import Item


@dataclass(frozen=True)
class ItemRow:
    pk: int
    system: str
    inputs: dict
    output: str
    reference: str

    @property
    def input_text(self) -> str:
        return "\n".join(str(v) for v in self.inputs.values())


Progress = Callable[[str, int], None]  # (metric, done so far); raises JobStopped when the job is cancelled


def local_record(options: dict, name: str) -> dict:
    """How a local model scored metric `name` in this job (precision, device, ...), as the job recorded it."""
    return dict((options.get("gptscore_hf") or {}).get(name) or {})


def storage_key(name: str, options: dict) -> str:
    """The name a metric's scores are stored under: the metric's name, except that `ensemble` also names the
    preset's models, so a job after ENSEMBLE_PRESET changed does not reuse another ensemble's scores, and a
    local GPTScore names the precision it computed in, so no job mixes or reuses scores of another precision."""
    if name == "ensemble":
        return f"ensemble:{'+'.join(options.get('annotators', []))}/{options.get('supervisor', '')}"
    precision = local_record(options, name).get("precision")
    if name.startswith(f"{LOCAL_GPTSCORE}:") and precision:
        return f"{name}@{precision}"
    return name


def dataset_items(dataset_id: int) -> list[ItemRow]:
    rows = Item.objects.filter(dataset_id=dataset_id).order_by("position").values_list(
        "pk", "system", "inputs", "output", "reference")
    return [ItemRow(*row) for row in rows]


def existing_scores(items: Sequence[ItemRow], metric: str, aspect: str) -> set[int]:
    return set(MetricScore.objects.filter(item__in=[i.pk for i in items], metric=metric, aspect=aspect)
               .values_list("item_id", flat=True))


def store_scores(metric: str, aspect: str, values: Iterable[tuple[int, float]]) -> int:
    rows = [MetricScore(item_id=pk, metric=metric, aspect=aspect, value=v) for pk, v in values]
    MetricScore.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def job_options_save(job: ComparisonJob) -> None:
    """Write the job's options as they are in memory (a local model's record was added to them)."""
    ComparisonJob.objects.filter(pk=job.pk).update(options=job.options)
