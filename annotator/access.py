"""Role checks shared by every view and API operation: one place decides who may see what."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest


def require_researcher(request: HttpRequest) -> None:
    """Researchers and admins see everything; annotators only their own assignments."""
    user = request.user
    if not user.is_authenticated or not user.sees_everything:
        raise PermissionDenied("Researchers and admins only.")


def require_admin(request: HttpRequest) -> None:
    """Only admins start, cancel or resume LLM jobs."""
    user = request.user
    if not user.is_authenticated or not user.is_admin_role:
        raise PermissionDenied("Only admins run LLM jobs.")
