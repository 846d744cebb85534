"""The one error type for a request the user can put right, and the status each kind of refusal answers.

It sits below every layer and imports nothing, so the Django-free engine, the services, the API, the views
and the management commands all raise and catch the same type. Each edge maps it once: the API's exception
handler (config.api), the views' middleware (config.middleware) and the commands' base class
(errors.commands). `accounts.access.AccessError` stays the type for "who may" (403/404); this one is for
"what was sent" (400/422), "not now" (409) and "not so often" (429).
"""

from __future__ import annotations

from collections.abc import Sequence

BAD_REQUEST = 400
CONFLICT = 409
UNPROCESSABLE = 422
TOO_MANY = 429


Field = str | Sequence[str] | None
"""What a refusal is about: one field's dotted path (`link.cap`, `routing.min_k`), several, or none."""


class UserError(Exception):
    """A refusal whose message tells the user what to change; `status` is its HTTP status (422 unless said).

    `field` names what was sent wrong, as data, so a form places the message at its field and the API answers
    it beside the message (`{"detail": ..., "field": ...}`) without anyone reading the text: a dotted path
    into the request (`link.cap`, `protocol_options.major_from`), several of them, or None when the refusal is
    about the request as a whole. `retry_after` (seconds) goes out as a Retry-After header when the refusal
    is temporary."""

    status: int = UNPROCESSABLE

    def __init__(self, message: str = "", *, field: Field = None, status: int | None = None,
                 retry_after: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.field: str | tuple[str, ...] | None = _normal_field(field)
        self.retry_after = retry_after

    @property
    def fields(self) -> tuple[str, ...]:
        """Every field the refusal names, in order (empty when it names none)."""
        if self.field is None:
            return ()
        return (self.field,) if isinstance(self.field, str) else self.field

    def field_json(self) -> str | list[str] | None:
        """`field` as the API's 4xx body gives it: a string for one field, a list for several, null for none."""
        return self.field if self.field is None or isinstance(self.field, str) else list(self.field)

    def body(self) -> dict[str, object]:
        """The JSON body of the refusal, from the API and from a view under /api/ alike: message and field."""
        return {"detail": str(self), "field": self.field_json()}


def _normal_field(field: Field) -> str | tuple[str, ...] | None:
    """One name stays a string; several become a tuple (one of them a string again); none, blank or empty is None."""
    if field is None or isinstance(field, str):
        return field or None
    names = tuple(name for name in field if name)
    if not names:
        return None
    return names[0] if len(names) == 1 else names


class BadRequest(UserError):
    """The request itself cannot be read (a body that is not text, a malformed parameter)."""

    status = BAD_REQUEST


class Conflict(UserError):
    """Sound input that the current state refuses (someone changed it since, nothing to undo, a name taken)."""

    status = CONFLICT


class TooMany(UserError):
    """Too much asked at once; `retry_after` says when to ask again."""

    status = TOO_MANY
