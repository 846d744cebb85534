"""`GET /healthz`: whether this web host reaches the database and the broker, for proxies and orchestrators."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection

BROKER_TIMEOUT = 3.0  # seconds; a probe gives up long before a worker's reconnection loop would


def database_problem() -> str:
    """Empty when a query answers; otherwise what went wrong."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        connection.close()  # the next request opens a fresh connection
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else 'unreachable'}"
    return ""


def broker_problem() -> str:
    """Empty when the broker accepts a connection; otherwise what went wrong."""
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    try:
        with Connection(settings.CELERY_BROKER_URL, connect_timeout=BROKER_TIMEOUT,
                        transport_options=options) as broker:
            broker.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - kombu raises its transports' own errors; each one means "down"
        return f"{type(exc).__name__}: {exc}"
    return ""


@login_not_required
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and the broker answer, 503 naming each one that did not. No login: a probe has no
    session; the answer holds nothing beyond each failure's class and message."""
    problems = {"database": database_problem(), "broker": broker_problem()}
    checks = {name: problem or "ok" for name, problem in problems.items()}
    failed = [name for name, problem in problems.items() if problem]
    return JsonResponse({"status": "failed: " + ", ".join(failed) if failed else "ok", "checks": checks},
                        status=503 if failed else 200)
