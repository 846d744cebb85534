"""What an LLM error does to a job, in the job's own terms: the policy's answer as a JobStopped."""

from __future__ import annotations

from evaluation.llm.errors import BackendError, ServerListError
from evaluation.llm.policy import Stop, stop_for
from jobs.lifecycle import JobStopped
from jobs.models import JobStatus

LLM_ERRORS = (BackendError, ServerListError)  # what `llm_stopped` takes


def llm_stopped(exc: BaseException, *, kept: str) -> JobStopped:
    """The end of a job that met `exc`: paused (with `kept`, what is kept and when to resume) or failed, as
    `evaluation.llm.policy.stop_for` says. An error that only fails one request reaching the job fails it."""
    if stop_for(exc) is Stop.PAUSE:
        return JobStopped(JobStatus.PAUSED, f"{exc} {kept}")
    return JobStopped(JobStatus.FAILED, str(exc))
