"""The one exception of the DHP engine."""

from __future__ import annotations

from errors import UserError


class DhpError(UserError):
    """Bad input to the DHP engine (an unknown kind, weights that cannot be used, ...); the message says which."""
