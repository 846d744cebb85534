"""The one exception of the DHP engine."""

from __future__ import annotations


class DhpError(ValueError):
    """Bad input to the DHP engine (an unknown kind, weights that cannot be used, ...); the message says which."""
