"""When a running run counts as abandoned: its worker stopped beating for RUN_STALE_SECONDS.

One rule for the claim (who may take a run over) and for a starting worker (which runs to re-queue),
so the two cannot disagree.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from evaluation.models import EvaluatorRun, RunStatus


def stale_running(now: datetime) -> Q:
    """Running runs whose last heartbeat is older than RUN_STALE_SECONDS at `now`."""
    return Q(status=RunStatus.RUNNING, heartbeat_at__lt=now - timedelta(seconds=settings.RUN_STALE_SECONDS))


def runs_needing_recovery() -> list[int]:
    """Runs left 'running' by a worker that died (no heartbeat for RUN_STALE_SECONDS): claimable now."""
    return list(EvaluatorRun.objects.filter(stale_running(timezone.now())).values_list("pk", flat=True))


def runs_going_stale() -> list[tuple[int, float]]:
    """Running runs whose heartbeat is still fresh, with the seconds until it would be stale.

    Their worker may be alive or may have died a moment ago; a starting worker looks again once the
    heartbeat would have expired, and the claim tells the two apart then.
    """
    now = timezone.now()
    stale_after = timedelta(seconds=settings.RUN_STALE_SECONDS)
    fresh = EvaluatorRun.objects.filter(status=RunStatus.RUNNING, heartbeat_at__gte=now - stale_after)
    return [(pk, (beat + stale_after - now).total_seconds()) for pk, beat in fresh.values_list("pk", "heartbeat_at")]
