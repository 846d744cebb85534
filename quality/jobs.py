"""The decoy explanation job and the planted-error writing job as job kinds: what a worker does with a claimed job,
and where its actions live."""

from __future__ import annotations

from accounts.access import require_researcher
from jobs.kinds import JobRoutes, register
from quality.api import decoy_job_out, planted_job_out
from quality.decoy_explaining import decoy_explanations_write
from quality.models import DecoyExplanationJob, PlantedWritingJob
from quality.planted_writing import planted_writing_write
from quality.schemas import DecoyExplanationJobOut, PlantedWritingJobOut

KIND = register(
    DecoyExplanationJob, decoy_explanations_write, related=("campaign",),
    routes=JobRoutes(
        api="/decoy-explanations/{job_id}", name="decoy_explanation_job", tag="campaigns",
        schema=DecoyExplanationJobOut, out=decoy_job_out, page="campaigns/decoy-explanations/<int:pk>/",
        page_name="decoy_explanation_job", permission=require_researcher,
        resumed="decoys already done are not asked again; stored answers come from the call ledger.",
        select_related=("campaign",), template="quality/decoy_explanation_job.html",
        descriptions=(
            "Cancel a decoy explanation job (a running one stops at its next batch); the explanations written so "
            "far are kept. Researchers and admins.",
            "Queue a paused, failed or abandoned decoy explanation job again; decoys already done are not asked "
            "again. Researchers and admins.",
        ),
    ),
)

PLANTED_KIND = register(
    PlantedWritingJob, planted_writing_write, related=("campaign",),
    routes=JobRoutes(
        api="/planted-writing/{job_id}", name="planted_writing_job", tag="campaigns",
        schema=PlantedWritingJobOut, out=planted_job_out, page="campaigns/planted-writing/<int:pk>/",
        page_name="planted_writing_job", permission=require_researcher,
        resumed="planted outputs already done are not asked again; stored answers come from the call ledger.",
        select_related=("campaign",), template="quality/planted_writing_job.html",
        descriptions=(
            "Cancel a planted-error writing job (a running one stops at its next batch); the planted errors written "
            "so far are kept. Researchers and admins.",
            "Queue a paused, failed or abandoned planted-error writing job again; planted outputs already done are "
            "not asked again. Researchers and admins.",
        ),
    ),
)
