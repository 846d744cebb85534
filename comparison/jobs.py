"""The metric comparison as a job kind: what a worker does with a claimed comparison."""

from __future__ import annotations

from comparison.models import ComparisonJob
from comparison.services.execute import comparison_compute
from jobs.kinds import register

KIND = register(ComparisonJob, comparison_compute, related=("dataset__task",))
