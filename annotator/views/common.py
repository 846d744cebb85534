"""What every view of the annotation app shares: the typed request and access helpers."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from annotator.models import User


class AppRequest(HttpRequest):
    user: User
    htmx: HtmxDetails


def require_researcher(request: AppRequest) -> None:
    if not request.user.sees_everything:
        raise PermissionDenied("Researchers and admins only.")
