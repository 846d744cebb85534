"""What every view of the annotation app shares: the typed request and access helpers."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from accounts.access import require_researcher
from accounts.models import User


class AppRequest(HttpRequest):
    user: User
    htmx: HtmxDetails

__all__ = ["AppRequest", "require_researcher"]
