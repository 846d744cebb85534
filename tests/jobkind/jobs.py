"""The fixture kind's declaration: its work, and where its Cancel and Resume (and, having no view, its page) live."""

from __future__ import annotations

from accounts.access import require_admin
from jobs.kinds import JobRoutes, register
from jobs.lifecycle import job_checkpoint
from tests.jobkind.models import Tally


def execute(job: Tally) -> None:
    """Count to the total, one checkpoint per unit."""
    for done in range(job.done + 1, job.total + 1):
        job_checkpoint(Tally, job.pk, done=done)


KIND = register(
    Tally, execute,
    routes=JobRoutes(
        api="/tallies/{tally_id}", name="tally", tag="tallies", page="tallies/<int:pk>/", page_name="tally",
        permission=require_admin, resumed="it counts on from where it stopped.", template="jobkind/tally.html",
    ),
)
