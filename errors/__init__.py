"""The one error type for a request the user can put right, and the status each kind of refusal answers.

It sits below every layer and imports nothing, so the Django-free engine, the services, the API, the views
and the management commands all raise and catch the same type. Each edge maps it once: the API's exception
handler (config.api), the views' middleware (config.middleware) and the commands' base class
(errors.commands). `accounts.access.AccessError` stays the type for "who may" (403/404); this one is for
"what was sent" (400/422), "not now" (409) and "not so often" (429).
"""

from __future__ import annotations

BAD_REQUEST = 400
CONFLICT = 409
UNPROCESSABLE = 422
TOO_MANY = 429


class UserError(Exception):
    """A refusal whose message tells the user what to change; `status` is its HTTP status (422 unless said).

    `retry_after` (seconds) goes out as a Retry-After header when the refusal is temporary."""

    status: int = UNPROCESSABLE

    def __init__(self, message: str = "", *, status: int | None = None, retry_after: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.retry_after = retry_after


class BadRequest(UserError):
    """The request itself cannot be read (a body that is not text, a malformed parameter)."""

    status = BAD_REQUEST


class Conflict(UserError):
    """Sound input that the current state refuses (someone changed it since, nothing to undo, a name taken)."""

    status = CONFLICT


class TooMany(UserError):
    """Too much asked at once; `retry_after` says when to ask again."""

    status = TOO_MANY
