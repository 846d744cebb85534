"""Analytics computed by a worker for the web: gamma for the API's source comparison."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from analytics.compare.gamma import gamma_compute


@shared_task(name="tasks.analytics.compute_gamma", acks_late=True, soft_time_limit=3 * 3600, time_limit=3 * 3600 + 60)
def compute_gamma(question: dict[str, Any], key: str) -> str:
    """Compute one source comparison with gamma and leave it in the results cache under `key`."""
    return gamma_compute(question, key)
