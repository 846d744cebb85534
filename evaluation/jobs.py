"""The evaluator run as a job kind: what a worker does with a claimed run."""

from __future__ import annotations

from accounts.access import require_admin
from evaluation.api import run_out
from evaluation.models import EvaluatorRun
from evaluation.runs.execute import RunExecutor
from evaluation.schemas import RunOut
from jobs.kinds import JobRoutes, register


def execute(run: EvaluatorRun) -> None:
    """Ask every model of the run over its servers; finished calls come from the cache on a resume."""
    RunExecutor(run).execute()


KIND = register(
    EvaluatorRun, execute, related=("aspect__task", "dataset"),
    routes=JobRoutes(
        api="/runs/{run_id}", name="run", tag="runs", schema=RunOut, out=run_out,
        page="runs/<int:pk>/", page_name="run_detail", permission=require_admin,
        resumed="finished calls come from the cache.", select_related=("evaluator", "dataset", "aspect"),
    ),
)
