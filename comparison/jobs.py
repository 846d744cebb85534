"""The metric comparison as a job kind: what a worker does with a claimed comparison."""

from __future__ import annotations

from accounts.access import require_admin
from comparison.models import ComparisonJob
from comparison.schemas import ComparisonOut
from comparison.selectors import job_progress
from comparison.services.execute import comparison_compute
from jobs.kinds import JobRoutes, register

KIND = register(
    ComparisonJob, comparison_compute, related=("dataset__task",),
    routes=JobRoutes(
        api="/comparisons/{job_id}", name="comparison", tag="comparisons", schema=ComparisonOut, out=job_progress,
        page="comparisons/<int:pk>/", page_name="comparison_detail", permission=require_admin,
        resumed="stored scores are kept and not computed again.", select_related=("dataset",),
    ),
)
