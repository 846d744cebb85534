"""The one exception the comparison engine raises: bad metric names, impossible requests."""

from __future__ import annotations

from errors import UserError


class ComparisonError(UserError):
    """A metric or request the comparison cannot honour; the message says what to do instead."""
