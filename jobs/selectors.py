"""Reads across the job kinds: whether any worker listens to a queue, and what waits for one meanwhile."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from jobs.kinds import job_kinds
from jobs.models import JobStatus, WorkerBeat


@dataclass(frozen=True)
class WorkerSilence:
    """No worker consuming `queue` has beaten for `minutes` (or ever: `last_beat` is None); `queued` counts the
    pending jobs of each kind by its plural name."""

    queue: str
    minutes: int
    last_beat: datetime | None
    last_hostname: str
    queued: list[tuple[str, int]]


def worker_silence(*, queue: str, minutes: int, now: datetime | None = None) -> WorkerSilence | None:
    """Return None while a worker consuming `queue` beat within the last `minutes`, else what the admins should
    know: the last beat heard from such a worker and what is queued meanwhile."""
    now = now or timezone.now()
    beats = [beat for beat in WorkerBeat.objects.order_by("-beat_at") if queue in beat.queues]
    last = beats[0] if beats else None
    if last is not None and last.beat_at >= now - timedelta(minutes=minutes):
        return None
    queued = []
    for kind in job_kinds():
        count = kind.model.objects.filter(status=JobStatus.PENDING).count()
        if count:
            queued.append((str(kind.model._meta.verbose_name_plural), count))
    return WorkerSilence(queue=queue, minutes=minutes, last_beat=last.beat_at if last else None,
                         last_hostname=last.hostname if last else "", queued=queued)
