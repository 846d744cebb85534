"""Execute a claimed comparison job: every missing metric score, then the results, with progress."""

from __future__ import annotations

from django.db.models import F

from comparison.engine.metrics import Family, parse_metrics
from comparison.models import ComparisonJob
from comparison.services.results import job_results
from comparison.services.scoring import score_metric
from comparison.services.stored import dataset_items
from evaluation.llm.servers import ServerKind, ServerListError, parse_server
from evaluation.llm.simulated import server_simulated
from evaluation.models import EvaluatorRun
from jobs.lifecycle import job_beat, job_checkpoint


class _Tracker:
    """Writes progress as scores arrive, and notices a cancel request."""

    def __init__(self, job: ComparisonJob) -> None:
        self.job = job

    def progress(self, metric: str, done: int) -> None:
        entry = self.job.progress.setdefault(metric, {"done": 0, "total": done})
        entry["done"] = done
        job_checkpoint(ComparisonJob, self.job.pk, progress=self.job.progress, **progress_sums(self.job.progress))

    def count_call(self, n: int) -> None:
        if n:
            ComparisonJob.objects.filter(pk=self.job.pk).update(llm_calls=F("llm_calls") + n)

    def remember_run(self, metric: str, aspect: str, run_id: int) -> None:
        self.job.runs.setdefault(metric, {})[aspect] = run_id
        ComparisonJob.objects.filter(pk=self.job.pk).update(runs=self.job.runs)


def _answered_by_simulator(job: ComparisonJob) -> bool:
    """Return whether a run this job used, or its GPTScore server, is the simulator."""
    run_ids = [pk for by_aspect in job.runs.values() for pk in by_aspect.values()]
    if EvaluatorRun.objects.filter(pk__in=run_ids, simulated=True).exists():
        return True
    gptscore = any(s.family is Family.GPTSCORE and not s.local for s in parse_metrics(job.metrics))
    if gptscore and job.options.get("gptscore_url"):
        try:
            return server_simulated(parse_server(job.options["gptscore_url"], default=ServerKind.OPENAI))
        except ServerListError:
            return False
    return False


def progress_sums(progress: dict) -> dict[str, int]:
    """The job's `done` and `total`: the sums over its metrics' {done, total} (one JSON entry per metric)."""
    entries = [e for e in (progress or {}).values() if isinstance(e, dict)]
    return {"done": sum(int(e.get("done", 0)) for e in entries), "total": sum(int(e.get("total", 0)) for e in entries)}


def comparison_compute(job: ComparisonJob) -> None:
    """Every missing metric score, then the results (the job's worker part)."""
    tracker = _Tracker(job)
    items = dataset_items(job.dataset_id)
    for spec in parse_metrics(job.metrics):
        score_metric(job, spec, items, tracker.progress, tracker.count_call, tracker.remember_run)
    results = job_results(job)
    simulated = job.simulated or _answered_by_simulator(job)
    job_beat(ComparisonJob, job.pk, results=results, simulated=simulated)
