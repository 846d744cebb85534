"""Who may do what: role checks, and the one error type every access decision raises.

Object-level rules (whose assignment, which campaign is open) live in `annotator.access`; both raise
`AccessError`, which views (config.middleware) and the API (config.api) turn into its HTTP status.
"""

from __future__ import annotations

from django.http import HttpRequest

FORBIDDEN = 403
NOT_FOUND = 404
CONFLICT = 409


class AccessError(Exception):
    """A refused action: 403 (not allowed), 404 (not yours, and not even told it exists) or 409 (not now)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    @classmethod
    def forbidden(cls, message: str) -> AccessError:
        return cls(FORBIDDEN, message)

    @classmethod
    def not_found(cls, message: str) -> AccessError:
        return cls(NOT_FOUND, message)

    @classmethod
    def conflict(cls, message: str) -> AccessError:
        return cls(CONFLICT, message)


def require_researcher(request: HttpRequest) -> None:
    """Researchers and admins see everything; annotators only their own assignments."""
    user = request.user
    if not user.is_authenticated or not user.sees_everything:
        raise AccessError.forbidden(
            "Only researchers and admins open this page (datasets, campaigns, analytics, exports). An annotator "
            "works on their own assignments: they are listed on the home page."
        )


def require_admin(request: HttpRequest) -> None:
    """Only admins start, cancel or resume LLM jobs."""
    user = request.user
    if not user.is_authenticated or not user.is_admin_role:
        raise AccessError.forbidden(
            "Only admins start, cancel or resume LLM jobs (evaluator runs, DHP runs, metric comparisons): ask an "
            "admin to start one, or open the runs and results that exist."
        )
