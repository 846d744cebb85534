"""The DHP run as a job kind: what a worker does with a claimed run."""

from __future__ import annotations

from dhp.models import DhpRun
from dhp.services.execute import DhpExecutor
from jobs.kinds import register


def execute(run: DhpRun) -> None:
    """Perturb, score, test and combine; stored scores and calls are not asked again on a resume."""
    DhpExecutor(run).execute()


KIND = register(DhpRun, execute, related=("dataset__task",))
