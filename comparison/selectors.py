"""Reads for the comparison pages and API: job lists, progress, and the Table-3-like grid."""

from __future__ import annotations

from dataclasses import dataclass

from comparison.models import ComparisonJob
from stats.metric_correlation import COEFFICIENTS, LEVELS


def jobs_for_list(limit: int = 50) -> list[ComparisonJob]:
    return list(ComparisonJob.objects.select_related("dataset").order_by("-created_at")[:limit])


def job_progress(job: ComparisonJob) -> dict:
    done = sum(int(p.get("done", 0)) for p in job.progress.values())
    total = sum(int(p.get("total", 0)) for p in job.progress.values())
    return {
        "id": job.pk, "dataset": job.dataset.name, "status": job.status, "message": job.message,
        "metrics": job.metrics, "aspects": job.aspects, "done": done, "total": total,
        "percent": round(100 * done / total) if total else 100, "llm_calls": job.llm_calls,
        "per_metric": [{"metric": m, **job.progress.get(m, {"done": 0, "total": 0})} for m in job.metrics],
        "runs": job.runs, "finished": job.is_finished(),
    }


@dataclass(frozen=True)
class Cell:
    value: float | None
    ci: list[float] | None
    n: int
    best: bool


@dataclass(frozen=True)
class Grid:
    level: str
    coefficient: str
    aspects: list[str]
    rows: list[tuple[str, list[Cell]]]  # metric, one cell per aspect


def correlation_grid(job: ComparisonJob, *, level: str = "dataset", coefficient: str = "spearman") -> Grid:
    """Metrics x aspects for one level and coefficient; the best value of each aspect (column) is marked."""
    level = level if level in LEVELS else "dataset"
    coefficient = coefficient if coefficient in COEFFICIENTS else "spearman"
    found = {(r["metric"], r["aspect"]): r for r in (job.results or {}).get("correlations", [])
             if r["level"] == level}
    best = {}
    for aspect in job.aspects:
        values = [found[(m, aspect)][coefficient] for m in job.metrics
                  if (m, aspect) in found and found[(m, aspect)][coefficient] is not None]
        best[aspect] = max(values) if values else None
    rows = []
    for metric in job.metrics:
        cells = []
        for aspect in job.aspects:
            r = found.get((metric, aspect))
            value = r[coefficient] if r else None
            cells.append(Cell(value, (r["ci"] or {}).get(coefficient) if r else None, r["n"] if r else 0,
                              value is not None and value == best[aspect]))
        rows.append((metric, cells))
    return Grid(level, coefficient, list(job.aspects), rows)
