"""The evaluator run as a job kind: what a worker does with a claimed run."""

from __future__ import annotations

from evaluation.models import EvaluatorRun
from evaluation.runs.execute import RunExecutor
from jobs.kinds import register


def execute(run: EvaluatorRun) -> None:
    """Ask every model of the run over its servers; finished calls come from the cache on a resume."""
    RunExecutor(run).execute()


KIND = register(EvaluatorRun, execute, related=("aspect__task", "dataset"))
