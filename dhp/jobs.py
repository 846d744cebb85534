"""The DHP run as a job kind: what a worker does with a claimed run."""

from __future__ import annotations

from accounts.access import require_admin
from dhp.api import run_out
from dhp.models import DhpRun
from dhp.schemas import DhpRunOut
from dhp.services.execute import DhpExecutor
from jobs.kinds import JobRoutes, register


def execute(run: DhpRun) -> None:
    """Perturb, score, test and combine; stored scores and calls are not asked again on a resume."""
    DhpExecutor(run).execute()


KIND = register(
    DhpRun, execute, related=("dataset__task",),
    routes=JobRoutes(
        api="/dhp/runs/{run_id}", name="dhp_run", tag="dhp", schema=DhpRunOut, out=run_out,
        page="dhp/runs/<int:pk>/", page_name="dhp_run", permission=require_admin,
        resumed="stored scores and calls are not asked again.", select_related=("dataset", "weights"),
    ),
)
